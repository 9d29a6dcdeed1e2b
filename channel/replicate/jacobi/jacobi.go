// Package jacobi is a small real application for the replication layer
// to run: Jacobi iteration for Laplace's equation on an N×N grid, split
// by rows among the ranks of any channel.Comm, with a halo exchange per
// step and a global residual every few steps (Allgather), as stencil codes
// are. Halos are sent straight from the grid, so a bit flipped in a send
// buffer is a bit flipped in the solution, and spreads as a fault in a
// real code would.
//
// It is deterministic: the same N, steps and ranks give a bit-identical
// grid, so a run under faults can be compared with a fault-free one.
package jacobi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/sigcheck/sigcheck/channel"
)

// Config is a run.
type Config struct {
	N     int // interior grid points per side; each rank owns at least one row
	Steps int
	// Check is how often (in steps) the global residual is computed with
	// an Allgather; 0: never during the run.
	Check int
	// CopyHalos sends each halo from a copy of its row rather than from
	// the grid itself: a bit flipped in a send buffer then damages that
	// message only, not the sender's solution (so that under replication
	// each injected fault is exactly one corrupt message).
	CopyHalos bool
	// OnStep, if set, is called at the start of every step (0, 1, …):
	// a replicated Comm's Step, to keep its statistics per step.
	OnStep func(step int)
}

// Result is what rank 0 reports (other ranks get a zero Grid and Hash).
type Result struct {
	Residual float64   // the last global residual (‖u_new − u_old‖₂ of a step)
	Hash     uint64    // XXH3-64 of the final N×N interior, gathered at rank 0
	Grid     []float64 // that interior, row-major (rank 0 only)
}

// Tags of the application's messages.
const (
	tagUp = iota + 1
	tagDown
	tagGather
)

// ErrConfig: a grid too small for the ranks, or a non-positive size.
var ErrConfig = errors.New("jacobi: bad configuration")

// rows returns the first row and the number of rows of rank i of p.
func rows(n, p, i int) (int, int) {
	q, rem := n/p, n%p
	lo := i*q + min(i, rem)
	cnt := q
	if i < rem {
		cnt++
	}
	return lo, cnt
}

// Run runs the iteration on c; every rank calls it with the same cfg.
func Run(ctx context.Context, c channel.Comm, cfg Config) (Result, error) {
	p, me := c.Size(), c.Rank()
	if cfg.N < 1 || cfg.N < p || cfg.Steps < 0 || cfg.Check < 0 {
		return Result{}, fmt.Errorf("%w: N %d for %d ranks, %d steps, check every %d", ErrConfig, cfg.N, p, cfg.Steps, cfg.Check)
	}
	n := cfg.N
	w := n + 2 // a row with its two boundary columns
	_, cnt := rows(n, p, me)
	// Local rows 1…cnt are this rank's; rows 0 and cnt+1 are halos (or
	// the fixed boundary: u = 1 along the top edge, 0 elsewhere).
	u := make([]float64, (cnt+2)*w)
	v := make([]float64, (cnt+2)*w)
	if me == 0 {
		for j := 1; j <= n; j++ {
			u[j], v[j] = 1, 1
		}
	}
	row := func(g []float64, i int) []float64 { return g[i*w : (i+1)*w] }
	var res Result
	for step := range cfg.Steps {
		if cfg.OnStep != nil {
			cfg.OnStep(step)
		}
		if err := halo(ctx, c, u, row, cnt, cfg.CopyHalos); err != nil {
			return Result{}, fmt.Errorf("jacobi: step %d: %w", step, err)
		}
		local := 0.0
		for i := 1; i <= cnt; i++ {
			for j := 1; j <= n; j++ {
				x := 0.25 * (u[(i-1)*w+j] + u[(i+1)*w+j] + u[i*w+j-1] + u[i*w+j+1])
				d := x - u[i*w+j]
				local += d * d
				v[i*w+j] = x
			}
		}
		// The halo rows and boundary of v must match u's for the next step.
		copy(row(v, 0), row(u, 0))
		copy(row(v, cnt+1), row(u, cnt+1))
		u, v = v, u
		if cfg.Check > 0 && (step+1)%cfg.Check == 0 {
			r, err := residual(ctx, c, local)
			if err != nil {
				return Result{}, fmt.Errorf("jacobi: step %d: %w", step, err)
			}
			res.Residual = r
		}
	}
	grid, err := gather(ctx, c, u, n, cnt)
	if err != nil {
		return Result{}, fmt.Errorf("jacobi: gather: %w", err)
	}
	if me == 0 {
		res.Grid = grid
		res.Hash = xxh3.Hash(bytesOf(grid))
	}
	return res, nil
}

// bytesOf is the memory of a []float64 as bytes: sent as it is, so that
// what a message carries is the application's own memory.
func bytesOf(f []float64) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*8)
}

// halo sends the first and last own rows to the neighbours and receives
// theirs into the halo rows.
func halo(ctx context.Context, c channel.Comm, u []float64, row func([]float64, int) []float64, cnt int, copied bool) error {
	p, me := c.Size(), c.Rank()
	out := func(i int) []byte {
		if copied {
			return bytesOf(append([]float64(nil), row(u, i)...))
		}
		return bytesOf(row(u, i))
	}
	var reqs []*channel.Request
	if me > 0 {
		reqs = append(reqs, channel.Irecv(ctx, c, me-1, tagDown, bytesOf(row(u, 0))))
	}
	if me < p-1 {
		reqs = append(reqs, channel.Irecv(ctx, c, me+1, tagUp, bytesOf(row(u, cnt+1))))
	}
	var first error
	if me > 0 {
		first = c.Send(ctx, me-1, tagUp, out(1))
	}
	if me < p-1 && first == nil {
		first = c.Send(ctx, me+1, tagDown, out(cnt))
	}
	if err := channel.WaitAll(reqs...); err != nil && first == nil {
		first = err
	}
	return first
}

// residual sums the ranks' local sums of squares in rank order (the
// same floating-point operations on every rank) and takes the root.
func residual(ctx context.Context, c channel.Comm, local float64) (float64, error) {
	var send [8]byte
	binary.LittleEndian.PutUint64(send[:], math.Float64bits(local))
	all := make([]byte, 8*c.Size())
	if err := channel.Allgather(ctx, c, send[:], all); err != nil {
		return 0, err
	}
	sum := 0.0
	for i := range c.Size() {
		sum += math.Float64frombits(binary.LittleEndian.Uint64(all[8*i:]))
	}
	return math.Sqrt(sum), nil
}

// gather collects the interior at rank 0. Rank 0 sends its own rows to
// itself through c too, so that under replication they are voted on like
// every other rank's.
func gather(ctx context.Context, c channel.Comm, u []float64, n, cnt int) ([]float64, error) {
	p, me, w := c.Size(), c.Rank(), n+2
	mine := make([]float64, cnt*n)
	for i := range cnt {
		copy(mine[i*n:], u[(i+1)*w+1:(i+1)*w+1+n])
	}
	if me != 0 {
		return nil, c.Send(ctx, 0, tagGather, bytesOf(mine))
	}
	self := channel.Isend(ctx, c, 0, tagGather, bytesOf(mine))
	grid := make([]float64, n*n)
	for i := range p {
		lo, k := rows(n, p, i)
		st, err := c.Recv(ctx, i, tagGather, bytesOf(grid[lo*n:(lo+k)*n]))
		if err != nil {
			return nil, err
		}
		if st.Len != k*n*8 {
			return nil, fmt.Errorf("%w: %d bytes from rank %d, %d expected", channel.ErrCollective, st.Len, i, k*n*8)
		}
	}
	if _, err := self.Wait(); err != nil {
		return nil, err
	}
	return grid, nil
}
