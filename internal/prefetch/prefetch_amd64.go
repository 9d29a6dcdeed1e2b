package prefetch

// prefetch issues PREFETCHT0 for every cache line of p[:n].
//
//go:noescape
func prefetch(p *byte, n int)
