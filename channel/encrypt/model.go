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

// HereModel is this kind of machine idle (2 cores, Go 1.26, AES-NI): the
// cost of a call and the rate of AES-128-GCM sealing and opening on one
// core (the rate is the figure), of a message between ranks of
// one process, through memory, and of one between processes over
// loopback TCP. BenchmarkModelInputs measures GCM and a copy again, and
// channel's BenchmarkLatency and BenchmarkBandwidth the two links; a
// loaded machine measures less than the model says.
var HereModel = Model{
	Intra:   Link{Alpha: 1e-6, Beta: 1 / 8e9},
	Inter:   Link{Alpha: 25e-6, Beta: 1 / 3.5e9},
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
