//go:build race

package channel

// raceEnabled: the race detector is on (it allocates, and sync.Pool drops
// what it is given at random).
const raceEnabled = true
