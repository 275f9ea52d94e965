package rabbit

import (
	"context"
	"net/url"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/retry/topology"
)

// AllVhosts implements broker.AllVhostsReader: every vhost the user can see,
// from one listing each of vhosts, queues, exchanges and bindings across
// the broker — the same four requests for 1 vhost or 500, never one per
// vhost (the all-vhosts overview must not load the broker it watches).
// Rates are the server's (no earlier poll to difference against). Each
// vhost is recorded in the client's memory and analysed with it.
func (l *Live) AllVhosts(ctx context.Context) ([]broker.VhostSummary, error) {
	version, err := l.mgmt.BrokerVersion(ctx)
	if err != nil {
		return nil, err
	}
	vs, err := l.mgmt.readAll(ctx)
	if err != nil {
		return nil, err
	}
	return l.memory.Overview(vs, version, time.Now()), nil
}

// vhostColumn is the listings' vhost, added to their columns.
type vhostColumn struct {
	Vhost string `json:"vhost"`
}

func (m *Management) readAll(ctx context.Context) ([]topology.Vhost, error) {
	type (
		queue struct {
			vhostColumn
			apiQueue
		}
		exchange struct {
			vhostColumn
			apiExchange
		}
	)
	var (
		names      []string
		queues     []queue
		exchanges  []exchange
		errs       [4]error
		bindingsIn = map[string][]topology.Binding{}
		done       = make(chan struct{}, 4)
	)
	go func() {
		defer func() { done <- struct{}{} }()
		names, errs[0] = m.Vhosts(ctx)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		errs[1] = m.getJSON(ctx, "list queues", "queues", url.Values{"columns": {"vhost," + queueColumns}}, &queues)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		errs[2] = m.getJSON(ctx, "list exchanges", "exchanges", url.Values{"columns": {"vhost,name,type,arguments,messages_delayed"}}, &exchanges)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		list, err := m.rh.ListBindings()
		if err != nil {
			errs[3] = m.r.APIError("list bindings", err)
			return
		}
		for _, b := range list {
			bindingsIn[b.Vhost] = append(bindingsIn[b.Vhost], topology.Binding{
				Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType,
				RoutingKey: b.RoutingKey, Arguments: b.Arguments,
			})
		}
	}()
	for range 4 {
		<-done
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	now := time.Now()
	byName := map[string]*topology.Vhost{}
	var out []*topology.Vhost
	vhost := func(name string) *topology.Vhost {
		if v := byName[name]; v != nil {
			return v
		}
		v := &topology.Vhost{Name: name, RatesFrom: topology.RatesFromManagement, FullReadAt: now}
		byName[name] = v
		out = append(out, v)
		return v
	}
	for _, n := range names {
		vhost(n)
	}
	for _, aq := range queues {
		q, c := adaptQueue(aq.apiQueue)
		q.Rates = rates(aq.apiQueue, c, queueCounters{}, false, 0)
		// Stats off: no consumer count, and no Prometheus read here
		// (one per vhost would be what this read avoids).
		q.ConsumersUnknown = aq.Consumers == nil
		v := vhost(aq.Vhost)
		v.Queues = append(v.Queues, q)
	}
	perVhost := map[string][]apiExchange{}
	for _, x := range exchanges {
		perVhost[x.Vhost] = append(perVhost[x.Vhost], x.apiExchange)
	}
	for name, xs := range perVhost {
		vhost(name).Exchanges = adaptExchanges(xs)
	}
	for name, bs := range bindingsIn {
		vhost(name).Bindings = bs
	}
	res := make([]topology.Vhost, 0, len(out))
	for _, v := range out {
		res = append(res, *v)
	}
	slices.SortFunc(res, func(a, b topology.Vhost) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return res, nil
}
