// Package chaos is the channel's fault campaign: it draws random jobs
// (ranks, transport, protection, a mix of point-to-point messages,
// wildcard receives and collectives) and random fault schedules (frames
// flipped, dropped, truncated, duplicated, reordered or delayed, data or
// control; a peer killed; silent strangers at the door; receivers that
// throw messages away), runs each, and checks what the channel promises:
//
//   - every operation on every rank returns within its deadline (a
//     goroutine still blocked past it is a hang);
//   - on a protected layer, whatever a receive delivers is byte for byte
//     what was sent;
//   - on a protected layer, sender and receiver agree: as many sends fail
//     as receives (Send's error, or Flush's for an eager send), unless the
//     link itself broke, or a receiver said nothing through all of a
//     sender's probes (channel.ErrSilent: a process starved of processor
//     time), where no protocol can tell the sender what the receiver got
//     (the two generals); those are counted apart;
//   - the heap stays within a bound of the bytes the job moves.
//
// In process the faults are made by a transport written on the exported
// boundary (channel.NewEndpoint), so the engine's own paths run; over TCP
// by a proxy on loopback between every two ranks (tcp.Config.Dial), so
// that the real sockets carry the damage; a frame cut short there ends
// its connection, since on a byte stream nothing else can cut one. Over
// Open MPI, whose ranks are processes of their own, nothing can stand
// between them: each rank's transport is wrapped
// (channel.WithTransportWrapper) by one that shapes the frames it sends
// as the in-process links do, and RunProcess runs one rank of a job and
// judges it from every rank's report (channel/chaos/mpitest runs that
// campaign under mpirun; TestFaultWrapper runs it in process).
//
// go test runs a short campaign: 300 schedules, 8 a processor at
// once (-chaos.par), since most of a schedule's time is spent waiting
// (for a deadline that a lost frame or a dead peer runs out, a probe, a
// delay), about 10 s on 2 cores. A long one is
// go test ./channel/chaos -run '^TestCampaign$' -chaos.n 100000
// -chaos.budget 0 -timeout 0, which several processes can share
// (-chaos.from, the first seed of each; CI runs seeds 301 to 6000).
// Every bad schedule is reported with its seed (up to 20), a hang with
// the stacks of the channel's goroutines that work for its schedule (a
// label on each tells them from those of the schedules run beside it),
// and -chaos.seed replays one schedule, alone.
package chaos
