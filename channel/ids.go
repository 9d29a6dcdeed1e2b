package channel

// idWindow remembers which message ids a peer has opened, so that a
// message whose opening frame comes twice (a duplicate on the way) is
// not delivered twice. A sender numbers its messages in one sequence for
// all its peers and may write two of them to a link out of order (two
// goroutines sending at once), so the window keeps a bit per id over the
// last idSpan ids rather than only the highest; an id below the window is
// taken as seen.
type idWindow struct {
	base uint64 // the first id of the window: those below count as seen
	max  uint64 // the highest id opened
	bits [idSpan / 64]uint64
}

const idSpan = 4096

// open records id, and says whether it is new.
func (w *idWindow) open(id uint64) bool {
	if id < w.base {
		return false
	}
	if id >= w.base+2*idSpan { // far ahead: a new window just below it
		w.base, w.bits = (id-idSpan+64)&^63, [idSpan / 64]uint64{}
	}
	for id >= w.base+idSpan { // slide by a word
		copy(w.bits[:], w.bits[1:])
		w.bits[len(w.bits)-1] = 0
		w.base += 64
	}
	i := id - w.base
	if w.bits[i/64]&(1<<(i%64)) != 0 {
		return false
	}
	w.bits[i/64] |= 1 << (i % 64)
	w.max = max(w.max, id)
	return true
}

// seen says whether id was opened (true below the window).
func (w *idWindow) seen(id uint64) bool {
	if id < w.base {
		return true
	}
	i := id - w.base
	return i < idSpan && w.bits[i/64]&(1<<(i%64)) != 0
}

// opened returns the window of peer src, made on its first message.
// Under e.mu.
func (e *engine) opened(src int) *idWindow {
	if e.ids == nil {
		e.ids = make([]*idWindow, e.size)
	}
	w := e.ids[src]
	if w == nil {
		w = &idWindow{}
		e.ids[src] = w
	}
	return w
}
