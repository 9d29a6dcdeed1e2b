package transport

import (
	"context"
	"sync/atomic"
	"time"
)

// Delivery within the sender's call: the in-process transport's fast
// path (channel.NewLocal). Where a Send is a call into the receiving
// engine, with nothing between the ranks that could damage or lose a
// frame, a protected message's receiver can answer in that same call
// instead of with a control frame back, and control frames can go as
// calls. The two halves meet here, each an optional interface: the
// transport's (Caller) and the receiving engine's (CallFrames).

// Caller is a Transport whose Send delivers the frame within the call.
// The engine uses it only when it is the engine's transport itself, with
// no wrapper or Injector between: then nothing on the way can damage or
// lose what the call carries.
type Caller interface {
	Transport
	// SendCall is Send for a protected message's only frame. If the
	// receiver verified the message within the call, it reports
	// verified, and leaves the receiver's OK with the caller instead of
	// handing it to this rank's engine; the caller calls Handed once it
	// has ended the send with it.
	SendCall(ctx context.Context, dst int, h Header, payload []byte) (verified bool, err error)
	// Handed says that an OK SendCall reported is in.
	Handed()
	// Control hands a control frame (a verdict, an ask) to rank dst as a
	// call, not a frame.
	Control(dst int, h Header, payload []byte)
	// Settle waits, up to d, until no sender holds an OK it has not
	// handed to its engine: a rank that closes lets its verdicts reach
	// their senders first.
	Settle(d time.Duration)
}

// CallFrames is the Frames of an engine that can take frames as calls
// from a Caller.
type CallFrames interface {
	Frames
	// Direct reports whether this engine's own transport is a Caller
	// with nothing between: only then may a peer leave this engine's
	// OKs in its call (DeliverCall).
	Direct() bool
	// Settled reports whether this engine has created the context ctx
	// (channel's communicator number): frames of a context it has not
	// are parked until it does, and go as frames, not calls.
	Settled(ctx uint32) bool
	// DeliverBytes is Deliver for a payload the caller holds whole:
	// checked against h as Deliver checks a fill, copied before it
	// returns.
	DeliverBytes(src int, h Header, payload []byte) error
	// DeliverCall is DeliverBytes for a sender that waits in the call:
	// it reports whether the frame ended a protected message this engine
	// verified, in which case the OK is not sent but left to the caller
	// (DeliverOK on the sender's engine), and inHand has been raised
	// before this engine's lock was let go; the caller lowers it once
	// the OK is in.
	DeliverCall(src int, h Header, payload []byte, inHand *atomic.Int32) (verified bool, err error)
	// DeliverOK hands this (the sending) engine the OK that rank src
	// left in the call that delivered the frame h (DeliverCall).
	DeliverOK(src int, h Header)
	// DeliverControl takes a control frame from src as a call; payload
	// is the caller's, and is not written or kept.
	DeliverControl(src int, h Header, payload []byte) error
}
