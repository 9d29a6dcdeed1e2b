package encrypt

// Link is Hockney's model of one kind of transfer: α + β·n seconds for
// n bytes.
type Link struct {
	Alpha float64 // seconds a message (or a call)
	Beta  float64 // seconds a byte
}

func (l Link) cost(rounds, bytes int64) float64 {
	return float64(rounds)*l.Alpha + float64(bytes)*l.Beta
}

// Model prices what an encrypted all-gather does, per link class and per
// byte encrypted or decrypted, as the paper's Section IV-A does. Given
// to a Gatherer (WithModel), it adds the predicted time of each step to
// the counts that run along the critical path, so a run in one process
// predicts what the same schedule costs where encryption is slower than
// the network (the paper's regime), beside what it measured here.
type Model struct {
	Intra, Inter     Link // a message between ranks of one node, of two nodes
	Encrypt, Decrypt Link // one AES-GCM call
}

// HereModel is what this machine measured (2 cores shared, Go 1.26,
// AES-NI): AES-128-GCM seals and opens at about 4.5 GB/s a core with a
// call costing about 0.3 µs; a message between ranks of one process goes
// through memory (about 1 µs, 8 GB/s), one between processes over
// loopback TCP (about 25 µs, 2.5 GB/s). See the package's
// BenchmarkModelInputs to measure them again.
var HereModel = Model{
	Intra:   Link{Alpha: 1e-6, Beta: 1 / 8e9},
	Inter:   Link{Alpha: 25e-6, Beta: 1 / 2.5e9},
	Encrypt: Link{Alpha: 0.3e-6, Beta: 1 / 4.5e9},
	Decrypt: Link{Alpha: 0.3e-6, Beta: 1 / 4.5e9},
}

// NolelandModel approximates the paper's cluster (Fig. 1: encryption
// saturates near 5.5 GB/s a core, InfiniBand ping-pong near 11 GB/s;
// a few µs a message between nodes, under one within a node).
var NolelandModel = Model{
	Intra:   Link{Alpha: 0.4e-6, Beta: 1 / 20e9},
	Inter:   Link{Alpha: 1.5e-6, Beta: 1 / 11e9},
	Encrypt: Link{Alpha: 0.5e-6, Beta: 1 / 5.5e9},
	Decrypt: Link{Alpha: 0.5e-6, Beta: 1 / 5.5e9},
}

// Predict is the time m prices the algorithm at, from its counts in
// closed form (Table II carried over to any p and N, with ⌈lg⌉ and the
// largest node), the paper's upper estimate t_c + t_e + t_d, with the
// communication split between intra- and inter-node links as the
// algorithm's steps fall. (Auto does not choose by it: on this loaded
// machine the measured ranking and the model's differ, and the measured
// one decides; see Gatherer.Choose.)
func (md Model) Predict(a Algorithm, l Layout, m int) float64 {
	p, n := l.Size(), l.Nodes()
	_, lmax := l.PerNode()
	P, N, L, M := int64(p), int64(n), int64(lmax), int64(m)
	lgp, lgn, lgl := lg(p), lg(n), lg(lmax)
	if n == 1 {
		// No encryption at all: every algorithm is its plain schedule.
		switch a {
		case HS1, HS2:
			return md.Intra.cost(3, P*M)
		case ORing, CRing:
			return md.Intra.cost(P-1, (P-1)*M)
		}
		return md.Intra.cost(lgp, (P-1)*M)
	}
	enc := func(r, s int64) float64 { return md.Encrypt.cost(r, s) }
	dec := func(r, s int64) float64 { return md.Decrypt.cost(r, s) }
	// How the rounds of a p-rank RD or ring split, block or cyclic.
	rdIntra, rdInter := lgl, lgn
	ringInter := P - 1
	if !l.contiguous() {
		rdIntra, rdInter = 0, lgp
	}
	t := 0.0
	switch a {
	case Naive:
		t = md.Inter.cost(lgp, (P-1)*M) + enc(1, M) + dec(P-1, (P-1)*M)
	case ORing:
		t = md.Inter.cost(ringInter, (P-1)*M) + enc(P-1, (P-1)*M) + dec(P-1, (P-1)*M)
	case ORD:
		t = md.Intra.cost(rdIntra, (L-1)*M) + md.Inter.cost(rdInter, (P-L)*M) + enc(1, L*M) + dec(N-1, (P-L)*M)
	case ORD2:
		t = md.Intra.cost(rdIntra, (L-1)*M) + md.Inter.cost(rdInter, (P-L)*M) + enc(lgn, (P-L)*M) + dec(lgn, (P-L)*M)
	case CRing:
		t = md.Inter.cost(N-1, (N-1)*M) + md.Intra.cost(L-1, (P-N)*M) + enc(1, M) + dec(N-1, (N-1)*M)
	case CRD:
		t = md.Inter.cost(lgn, (N-1)*M) + md.Intra.cost(lgl, (P-N)*M) + enc(1, M) + dec(N-1, (N-1)*M)
	case HS1:
		rd := ceilDiv(N-1, L)
		t = md.Intra.cost(3, P*M) + md.Inter.cost(lgn, (P-L)*M) + enc(1, L*M) + dec(rd, rd*L*M)
	case HS2:
		t = md.Intra.cost(3, P*M) + md.Inter.cost(lgn, (P-L)*M) + enc(1, M) + dec(N-1, (N-1)*M)
	}
	return t
}
