package broker

import (
	"context"
	"errors"
)

// Failoverer is how a client goes on through another node of its cluster
// when its connection is lost: the live client given several addresses
// (--amqp-url a,b,c). A move does so inside the client; a replay, written
// once here on Publish, asks for the other node's client (see Replay).
// A client that knows no other node says so (ErrNoFailover).
type Failoverer interface {
	// Failover opens a client on the next node that answers, named by
	// address; the caller closes it.
	Failover(ctx context.Context) (c Client, address string, err error)
}

// ErrNoFailover: the client knows no other node.
var ErrNoFailover = errors.New("no other node to go on through")
