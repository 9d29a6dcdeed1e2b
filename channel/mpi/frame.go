//go:build mpi

package mpi

import (
	"fmt"

	"github.com/sigcheck/sigcheck/channel"
)

// A frame crosses as MPI messages on the transport's own communicator:
//
//   - tagFrame: the 64-byte header (channel.Header.Put), followed by the
//     payload when the header says it is at most inlineMax bytes; then
//     one message holds the whole frame, copied into C memory on its way
//     out and parsed from the receive ring's C memory on its way in;
//   - tagPayload: the payload of a larger frame, its own message right
//     after the header, sent from the caller's (pinned) memory and
//     received straight into the receive buffer the engine gives.
//
// A tagFrame message of no bytes at all says that its sender closed its
// endpoint (or dropped the link to this rank): the last message from it.
// MPI keeps the messages of one sender, tag and communicator in order, so
// frames and payloads pair up in sending order.
const (
	tagFrame   = 1
	tagPayload = 2
	// inlineMax is the largest payload that goes in the header's message.
	// Beyond it, a second message costs less than two copies (Open MPI's
	// shared-memory eager limit is 4 KiB; past it a message is a
	// rendezvous anyway).
	inlineMax = 16 << 10
	// frameMax is the largest tagFrame message; the receive ring's
	// buffers are this big.
	frameMax = channel.HeaderSize + inlineMax
)

// parseFrame checks and decodes one tagFrame message from rank src: its
// header (channel.ParseHeader, the same checks as every transport's) and
// that the message holds exactly the payload the header announces (all
// of it if inline, none if it follows as a tagPayload message). It
// returns the inline payload, a slice of msg.
func parseFrame(src int, msg []byte) (channel.Header, []byte, error) {
	if len(msg) < channel.HeaderSize {
		return channel.Header{}, nil, fmt.Errorf("%w: rank %d: a frame message of %d bytes, shorter than a header", channel.ErrProtocol, src, len(msg))
	}
	h, err := channel.ParseHeader(msg[:channel.HeaderSize])
	if err != nil {
		return channel.Header{}, nil, fmt.Errorf("rank %d: %w", src, err)
	}
	payload := msg[channel.HeaderSize:]
	switch {
	case h.Plen <= inlineMax && len(payload) != h.Plen:
		return channel.Header{}, nil, fmt.Errorf("%w: rank %d: a frame with %d payload bytes whose header says %d", channel.ErrProtocol, src, len(payload), h.Plen)
	case h.Plen > inlineMax && len(payload) != 0:
		return channel.Header{}, nil, fmt.Errorf("%w: rank %d: a frame of %d payload bytes sent with its header (at most %d are)", channel.ErrProtocol, src, h.Plen, inlineMax)
	}
	return h, payload, nil
}

// ParseFrame checks and decodes one message off the frame tag as the
// transport does, src being the rank MPI says sent it: exported for the
// fuzz targets, and for other implementations of this format.
func ParseFrame(src int, msg []byte) (channel.Header, []byte, error) { return parseFrame(src, msg) }
