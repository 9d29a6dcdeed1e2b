//go:build !amd64

package prefetch

func prefetch(p *byte, n int) {}
