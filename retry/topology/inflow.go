package topology

// Where a queue's inflow (Rates.In) comes from.
const (
	// InFromPublish is measured: what clients published into the queue,
	// as the broker counts it. Dead-lettered arrivals are not publishes:
	// on a dead-letter target it is a lower bound.
	InFromPublish = "publish"
	// InFromDepth is derived: the depth's change plus what consumers took
	// for good (Rates.Arrived). A lower bound where messages also leave
	// by expiry, rejection or a max length.
	InFromDepth = "depth"
	// InFromTTL is derived for a tier with a queue TTL that nobody
	// consumes: every message stays exactly the TTL, so the depth is what
	// arrived within the last TTL, and depth ÷ TTL the mean inflow over it.
	InFromTTL = "ttl"
)

// Inflow sets every queue's Rates.In, InSource and InKnown from its rates
// and the dead-letter graph of v. A queue nothing dead-letters into takes
// its counted publishes; without them, its depth-derived arrivals. Into a
// dead-letter target messages also arrive uncounted, so it takes the
// largest of what is known of its publishes (only when above zero: none
// counted says nothing there), its depth-derived arrivals and, for a TTL
// tier nobody consumes, its depth ÷ TTL; unknown when none is.
func Inflow(v *Vhost) {
	t := discBuild(v)
	for qi := range v.Queues {
		q := &v.Queues[qi]
		r := &q.Rates
		r.In, r.InSource, r.InKnown = 0, "", false
		set := func(in float64, src string) {
			if !r.InKnown || in > r.In {
				r.In, r.InSource, r.InKnown = in, src, true
			}
		}
		if len(t.dlFrom[qi]) == 0 && len(t.ownedInto[qi]) == 0 {
			switch {
			case r.Known:
				set(r.Publish, InFromPublish)
			case r.ArrivedKnown:
				set(r.Arrived, InFromDepth)
			}
			continue
		}
		if r.Known && r.Publish > 0 {
			set(r.Publish, InFromPublish)
		}
		if r.ArrivedKnown {
			set(r.Arrived, InFromDepth)
		}
		s := &t.set[qi]
		if s.HasMessageTTL && s.MessageTTL > 0 && q.Type != QueueStream && q.Consumers == 0 && !q.ConsumersUnknown {
			set(float64(q.Messages)/s.MessageTTL.Seconds(), InFromTTL)
		}
	}
}
