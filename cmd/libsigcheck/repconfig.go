package main

// Replication's settings and placement, apart from cgo so that they are
// tested everywhere (rep.go is the cgo side).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sigcheck/sigcheck/channel/replicate"
)

// The protocols, as rep.h numbers them (SC_REP_MSGPLUSHASH, SC_REP_ALLTOALL).
const (
	protoMsgPlusHash = 0
	protoAllToAll    = 1
)

// repConfig is what the environment asks of replication.
type repConfig struct {
	r             int // 0: replication off
	protocol      int // protoMsgPlusHash or protoAllToAll
	inject        float64
	replicas      uint64 // the injector's replicas, a bit each
	seed          uint64
	wait          float64  // seconds
	perturb       bool     // fill fresh heap memory with one byte (rep.c says why)
	testHookHosts []string // SIGCHECK_TEST_HOSTS: each world rank's node, as if the job ran on several machines
}

// defaultWait is how long a replica waits for another before it says
// the replicas went apart: long, because replicas of one rank may run at
// different speeds on a loaded machine, and a wait past it means a
// replica that will never answer (it took another path, or it is gone).
const defaultWait = 300

func parseRepConfig(getenv func(string) string) (repConfig, error) {
	c := repConfig{seed: 1, replicas: 1, wait: defaultWait, perturb: true}
	v := getenv("SIGCHECK_REPLICATE")
	if v == "" {
		for _, name := range []string{"SIGCHECK_REPLICATE_PROTOCOL", "SIGCHECK_INJECT_REPLICAS", "SIGCHECK_REPLICATE_WAIT", "SIGCHECK_REPLICATE_PERTURB"} {
			if getenv(name) != "" {
				return c, fmt.Errorf("%s is set but SIGCHECK_REPLICATE is not: replication is off", name)
			}
		}
		return c, nil
	}
	r, err := strconv.Atoi(v)
	if err != nil || r < 2 || r > 3 {
		return c, fmt.Errorf("SIGCHECK_REPLICATE=%q: want 2 (detection) or 3 (correction by vote) replicas per rank", v)
	}
	c.r = r
	switch p := strings.ToLower(getenv("SIGCHECK_REPLICATE_PROTOCOL")); p {
	case "", "msgplushash":
		c.protocol = protoMsgPlusHash
	case "alltoall", "all-to-all":
		c.protocol = protoAllToAll
	default:
		return c, fmt.Errorf("SIGCHECK_REPLICATE_PROTOCOL=%q: want msgplushash or alltoall", p)
	}
	if v := getenv("SIGCHECK_INJECT"); v != "" {
		rate, err := strconv.ParseFloat(v, 64)
		if err != nil || !(rate >= 0 && rate <= 1) {
			return c, fmt.Errorf("SIGCHECK_INJECT=%q: want a probability from 0 to 1", v)
		}
		c.inject = rate
	}
	if v := getenv("SIGCHECK_INJECT_REPLICAS"); v != "" {
		c.replicas = 0
		for _, f := range strings.Split(v, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || k < 0 || k >= r {
				return c, fmt.Errorf("SIGCHECK_INJECT_REPLICAS=%q: want replica numbers from 0 to %d, separated by commas", v, r-1)
			}
			c.replicas |= 1 << k
		}
	}
	if v := getenv("SIGCHECK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return c, fmt.Errorf("SIGCHECK_SEED=%q: want a non-negative integer", v)
		}
		c.seed = s
	}
	if v := getenv("SIGCHECK_REPLICATE_WAIT"); v != "" {
		w, err := strconv.ParseFloat(v, 64)
		if err != nil || !(w > 0 && w <= 1e6) {
			return c, fmt.Errorf("SIGCHECK_REPLICATE_WAIT=%q: want the seconds a replica waits for another, more than 0", v)
		}
		c.wait = w
	}
	switch v := getenv("SIGCHECK_REPLICATE_PERTURB"); v {
	case "", "1":
	case "0":
		c.perturb = false
	default:
		return c, fmt.Errorf("SIGCHECK_REPLICATE_PERTURB=%q: want 1 (the default: fresh heap memory filled with one byte) or 0", v)
	}
	// A test hook: the node of each rank of MPI_COMM_WORLD, in rank order,
	// as if the job ran on several machines.
	if v := getenv("SIGCHECK_TEST_HOSTS"); v != "" {
		c.testHookHosts = strings.Split(v, ",")
	}
	return c, nil
}

// places says which replica of which application rank each world rank
// runs. On one node it is the paper's formula (world rank k·n+v is
// replica k of rank v); on several, channel/replicate's Spread, which
// keeps the replicas of each rank on distinct nodes, or, when no map can
// (a node holds more than n ranks), the formula and a warning.
func places(nodes []string, r int) ([]replicate.Place, string, error) {
	distinct := map[string]bool{}
	for _, n := range nodes {
		distinct[n] = true
	}
	formula := func() []replicate.Place {
		m := replicate.Formula(len(nodes)/r, r)
		out := make([]replicate.Place, len(nodes))
		for i := range out {
			out[i] = m.Place(i)
		}
		return out
	}
	if len(nodes) == 0 || len(nodes)%r != 0 {
		return nil, "", fmt.Errorf("%d ranks are not a multiple of %d replicas", len(nodes), r)
	}
	if len(distinct) < 2 {
		return formula(), "", nil
	}
	m, err := replicate.Spread(nodes, r)
	if err != nil {
		return formula(), fmt.Sprintf("replicas of one rank share a node: %v", strings.TrimPrefix(err.Error(), "replicate: bad rank map: ")), nil
	}
	out := make([]replicate.Place, len(nodes))
	for i := range out {
		out[i] = m.Place(i)
	}
	return out, "", nil
}
