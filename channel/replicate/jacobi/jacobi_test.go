package jacobi

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/sigcheck/sigcheck/channel/replicate"
)

var small = Config{N: 32, Steps: 40, Check: 5}

// A serial Jacobi on the whole grid: the distributed one must match it
// bit for bit, whatever the number of ranks.
func serial(cfg Config) []float64 {
	n, w := cfg.N, cfg.N+2
	u := make([]float64, w*w)
	v := make([]float64, w*w)
	for j := 1; j <= n; j++ {
		u[j], v[j] = 1, 1
	}
	for range cfg.Steps {
		for i := 1; i <= n; i++ {
			for j := 1; j <= n; j++ {
				v[i*w+j] = 0.25 * (u[(i-1)*w+j] + u[(i+1)*w+j] + u[i*w+j-1] + u[i*w+j+1])
			}
		}
		u, v = v, u
	}
	out := make([]float64, n*n)
	for i := range n {
		copy(out[i*n:], u[(i+1)*w+1:(i+1)*w+1+n])
	}
	return out
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestMatchesSerial(t *testing.T) {
	want := serial(small)
	for _, p := range []int{1, 3, 4} {
		res, _, err := RunPlain(ctx(t), "local", p, small)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float64bits(res.Grid[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%d ranks: point %d is %v, serial %v", p, i, res.Grid[i], want[i])
			}
		}
		if res.Residual <= 0 {
			t.Errorf("%d ranks: residual %v", p, res.Residual)
		}
	}
}

// Replicated and fault-free, over both transports and protocols: the
// answer of the unreplicated run, bit for bit.
func TestReplicatedFaultFree(t *testing.T) {
	plain, _, err := RunPlain(ctx(t), "local", 4, small)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []string{"local", "tcp"} {
		for _, p := range []replicate.Protocol{replicate.MsgPlusHash, replicate.AllToAll} {
			for _, r := range []int{2, 3} {
				o, err := RunReplicated(ctx(t), Setup{Virtual: 4, Degree: r, Protocol: p, Transport: tr, Config: small})
				if err != nil || o.Err != nil {
					t.Fatalf("%s %s r=%d: %v %v", tr, p, r, err, o.Err)
				}
				if o.Result.Hash != plain.Hash || !o.Agree {
					t.Errorf("%s %s r=%d: hash %x, plain %x, replicas agree %v", tr, p, r, o.Result.Hash, plain.Hash, o.Agree)
				}
			}
		}
	}
}

// The paper's first protection study: faults in one replica set, r = 3:
// everything corrected, the answer bit-identical.
func TestOneReplicaSetCorrected(t *testing.T) {
	plain, _, err := RunPlain(ctx(t), "local", 4, small)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []replicate.Protocol{replicate.MsgPlusHash, replicate.AllToAll} {
		for seed := range uint64(3) {
			inj := replicate.Injector{Rate: 0.01, Seed: seed, Replica: 0, Rank: replicate.Every, Step: replicate.Every}
			o, err := RunReplicated(ctx(t), Setup{Virtual: 4, Degree: 3, Protocol: p, Transport: "local", Config: small, Injector: &inj})
			if err != nil || o.Err != nil {
				t.Fatalf("%s seed %d: %v %v", p, seed, err, o.Err)
			}
			var injected, corrected, uncorr uint64
			for _, s := range o.Stats {
				injected += s.Injected
				corrected += s.Corrected
				uncorr += s.Uncorrectable
			}
			if o.Result.Hash != plain.Hash || uncorr != 0 || (injected > 0 && corrected == 0) {
				t.Errorf("%s seed %d: hash %x want %x, injected %d corrected %d uncorrectable %d", p, seed, o.Result.Hash, plain.Hash, injected, corrected, uncorr)
			}
		}
	}
}

// With halos sent from copies and no residual on the way, every injected
// flip is one corrupt message: corrected = injected, exactly.
func TestCorrectedEqualsInjected(t *testing.T) {
	cfg := small
	cfg.Check, cfg.CopyHalos = 0, true
	plain, _, err := RunPlain(ctx(t), "local", 4, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []replicate.Protocol{replicate.MsgPlusHash, replicate.AllToAll} {
		inj := replicate.Injector{Rate: 0.05, Seed: 5, Replica: 2, Rank: replicate.Every, Step: replicate.Every}
		o, err := RunReplicated(ctx(t), Setup{Virtual: 4, Degree: 3, Protocol: p, Transport: "local", Config: cfg, Injector: &inj})
		if err != nil || o.Err != nil {
			t.Fatalf("%s: %v %v", p, err, o.Err)
		}
		var injected, corrected uint64
		for _, s := range o.Stats {
			injected += s.Injected
			corrected += s.Corrected
		}
		if o.Result.Hash != plain.Hash || injected == 0 || corrected != injected {
			t.Errorf("%s: hash %x want %x, injected %d corrected %d", p, o.Result.Hash, plain.Hash, injected, corrected)
		}
	}
}

// Faults anywhere at a high rate: every run ends with the right answer
// or with ErrNoMajority, never with a wrong answer.
func TestUnrestrictedAbortsOrRight(t *testing.T) {
	plain, _, err := RunPlain(ctx(t), "local", 4, small)
	if err != nil {
		t.Fatal(err)
	}
	aborted := 0
	for seed := range uint64(6) {
		inj := replicate.Injector{Rate: 0.05, Seed: seed, Replica: replicate.Every, Rank: replicate.Every, Step: replicate.Every}
		o, err := RunReplicated(ctx(t), Setup{Virtual: 4, Degree: 3, Protocol: replicate.MsgPlusHash, Transport: "local", Config: small, Injector: &inj})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case o.Err != nil:
			if !errors.Is(o.Err, replicate.ErrNoMajority) {
				t.Errorf("seed %d: %v", seed, o.Err)
			}
			aborted++
		case o.Result.Hash != plain.Hash:
			t.Errorf("seed %d: finished with a wrong answer", seed)
		}
	}
	t.Logf("%d of 6 runs aborted", aborted)
}
