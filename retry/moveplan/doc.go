// Package moveplan plans what ladder does to messages: moves, replays and
// unblocks, one route per message from that message (its origin, its
// x-death, its causes, the target's room), and the --where expressions that
// pick them. It does no I/O; the broker package carries the plans out.
package moveplan
