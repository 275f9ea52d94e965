package rabbit

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	amqp1 "github.com/Azure/go-amqp"

	"github.com/ladder-tui/ladder/broker"
	"github.com/ladder-tui/ladder/broker/decode"
	"github.com/ladder-tui/ladder/internal/termtext"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The costless browse of a quorum queue on RabbitMQ 4.3+: a receiver link
// over AMQP 1.0 (built into 4.x, on the AMQP port) to /queues/<name>, link
// credit for exactly the messages wanted, every one settled with the
// released outcome, then detached. Seen here on 4.3.6: the delivery count
// (what the delivery limit counts) never moves, only x-acquired-count;
// order is kept; nothing is dead-lettered however often it runs. On 4.0.5
// released counts a delivery like any return (so does modified), which is
// why 4.0–4.2 are not browsed this way (see PeekModeOf).

// amqp1Timeout bounds what a browse does after its messages arrived:
// draining the link's credit, the released settlements, the detach.
const amqp1Timeout = 10 * time.Second

// amqp1RoundBytes bounds the bodies one round of credit brings at once
// (the memory a browse holds before it hands them on).
const amqp1RoundBytes = 16 << 20

// amqp1FirstWait is how long a browse waits for its first message before
// taking the queue for empty (fewer ready than its depth said: another
// consumer took them), as the 0-9-1 peek waits for its first delivery.
const amqp1FirstWait = 2 * time.Second

// DialAMQP1 opens an AMQP 1.0 connection to the broker r describes, with the
// same credentials, vhost and TLS as DialAMQP: SASL PLAIN, the vhost as the
// open frame's hostname ("vhost:<name>"), amqps when the URL says so.
func (r *Resolved) DialAMQP1(ctx context.Context, purpose string) (*amqp1.Conn, error) {
	user, pass, err := r.AMQPLogin.Credentials(ctx)
	if err != nil {
		return nil, err
	}
	host := r.AMQP.Hostname()
	opts := &amqp1.ConnOptions{
		ContainerID: "ladder " + purpose,
		HostName:    "vhost:" + r.Vhost,
		SASLType:    amqp1.SASLTypePlain(user, pass),
		Properties:  map[string]any{"connection_name": "ladder " + purpose},
	}
	if r.AMQP.Scheme == "amqps" {
		tc := r.tlsConfig()
		if tc == nil {
			tc = &tls.Config{}
		}
		if tc.ServerName == "" {
			// The open frame's hostname names the vhost: the certificate
			// is checked against the broker's host.
			tc.ServerName = host
		}
		opts.TLSConfig = tc
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := amqp1.Dial(dctx, r.AMQP.Scheme+"://"+net.JoinHostPort(host, r.Port()), opts)
	if err != nil {
		return nil, fmt.Errorf("AMQP 1.0 at %s: %s", net.JoinHostPort(host, r.Port()), r.redact(err).Error())
	}
	return c, nil
}

// amqp1Address is RabbitMQ 4.x's v2 address of a queue.
func amqp1Address(queue string) string { return "/queues/" + url.PathEscape(queue) }

// amqp1Session is an AMQP 1.0 connection and the one session every browse
// of a client uses. One session keeps one client's browses in order: the
// released settlements of a browse reach the queue before the next
// browse's credit (from separate sessions a quick second browse was seen
// on 4.3.6 to get the released messages after the others).
type amqp1Session struct {
	conn *amqp1.Conn
	sess *amqp1.Session
}

func openAMQP1Session(ctx context.Context, r *Resolved, purpose string) (*amqp1Session, error) {
	c, err := r.DialAMQP1(ctx, purpose)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, amqp1Timeout)
	defer cancel()
	sess, err := c.NewSession(sctx, nil)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &amqp1Session{conn: c, sess: sess}, nil
}

func (s *amqp1Session) close() { _ = s.conn.Close() }

// amqp1Receiver is a receiver link attached to a queue with no credit:
// nothing has been delivered yet.
type amqp1Receiver struct {
	rcv *amqp1.Receiver
	s   *amqp1Session
	// tick, when set, reports the browse's progress while it waits.
	tick func()
}

// attach attaches a receiver to queue. It touches no message.
func (s *amqp1Session) attach(ctx context.Context, queue string) (*amqp1Receiver, error) {
	actx, cancel := context.WithTimeout(ctx, amqp1Timeout)
	defer cancel()
	rcv, err := s.sess.NewReceiver(actx, amqp1Address(queue), &amqp1.ReceiverOptions{
		Credit: -1, // manual: exactly the messages wanted, no more
	})
	if err != nil {
		return nil, err
	}
	return &amqp1Receiver{rcv: rcv, s: s}, nil
}

// amqp1Ended is a browse the broker ended while ladder held messages: they
// could not be released, so the broker returned them as after a crash,
// counting a delivery for each.
type amqp1Ended struct {
	Held int   // messages ladder held, at least (one more may have been taken)
	Err  error // what the broker said
}

func (e *amqp1Ended) Error() string {
	return fmt.Sprintf("the broker ended the AMQP 1.0 browse after %s: %s", topology.Plural(e.Held, "message", "messages"), amqp1Reason(e.Err))
}

func (e *amqp1Ended) Unwrap() error { return e.Err }

// amqp1Reason is the broker's reason for ending a link or session, bounded
// and sanitised (RabbitMQ may send a whole Erlang stack trace).
func amqp1Reason(err error) string {
	var remote *amqp1.Error
	var le *amqp1.LinkError
	var se *amqp1.SessionError
	var ce *amqp1.ConnError
	switch {
	case errors.As(err, &le) && le.RemoteErr != nil:
		remote = le.RemoteErr
	case errors.As(err, &se) && se.RemoteErr != nil:
		remote = se.RemoteErr
	case errors.As(err, &ce) && ce.RemoteErr != nil:
		remote = ce.RemoteErr
	default:
		errors.As(err, &remote)
	}
	s := err.Error()
	if remote != nil {
		s = string(remote.Condition)
		if d, _, _ := strings.Cut(strings.TrimSpace(remote.Description), "\n"); d != "" {
			s += ": " + d
		}
	}
	return clip(termtext.Sanitize(s), 160)
}

// browse takes up to want messages in queue order and hands each to visit,
// then settles every one it took with the released outcome and detaches.
// ready is the queue's ready count before it started. It stops early when
// visit fails (that error is returned) or ctx ends. Credit is drained
// before anything is released, so a released message is never delivered
// again to this link. When the broker ends the link or session first, the
// held messages cannot be released: *amqp1Ended.
//
// A quorum queue (4.x) delivers the messages returned to it first, in the
// order they were returned: a browse of fewer messages than it holds
// returned ones would move its own to the back of them (seen on 4.3.6:
// m0…m4 browsed, then m0 m1, left m2 m3 m4 m0 m1). So when the first
// message had been delivered before and the browse did not take every
// ready message, restoreOrder puts the queue back as it was.
//
// redelivered counts the deliveries of messages delivered before, which the
// broker counts in the queue's redeliver rate.
func (b *amqp1Receiver) browse(ctx context.Context, want, ready int, visit func(*amqp1.Message) error) (redelivered int, reordered string, err error) {
	defer b.close()
	if want <= 0 {
		return 0, "", nil
	}
	// Each message's fingerprint is taken as it arrives and its payload let
	// go once visit has it, so what the browse holds until it releases is
	// the deliveries, not their bodies (a dump streams).
	var fps []string
	held, err := b.take(ctx, want, func(m *amqp1.Message) error {
		fps = append(fps, fingerprint(m))
		err := visit(m)
		m.Data, m.Value, m.Sequence = nil, nil, nil
		return err
	})
	// What came after visit stopped (or ctx ended) was held, not visited.
	for _, m := range held[len(fps):] {
		fps = append(fps, fingerprint(m))
		m.Data, m.Value, m.Sequence = nil, nil, nil
	}
	for _, m := range held {
		if m.Header == nil || !m.Header.FirstAcquirer {
			redelivered++
		}
	}
	if end := (*amqp1Ended)(nil); errors.As(err, &end) {
		return redelivered, "", err
	}
	if len(held) == 0 {
		return 0, "", err
	}
	mayRotate := len(held) < ready && (held[0].Header == nil || !held[0].Header.FirstAcquirer)
	var ours []string
	if mayRotate {
		ours = fps[:len(held)]
	}
	if rerr := b.release(held); rerr != nil {
		return redelivered, "", &amqp1Ended{Held: len(held), Err: rerr}
	}
	if mayRotate {
		rctx := ctx
		if ctx.Err() != nil {
			// Stopped (cancelled, or its deadline): the order is put back
			// all the same, under a bound of its own.
			var cancel context.CancelFunc
			rctx, cancel = context.WithTimeout(context.Background(), amqp1Timeout)
			defer cancel()
		}
		var again int
		reordered, again = b.restoreOrder(rctx, ours)
		redelivered += again
	}
	return redelivered, reordered, err
}

// take receives up to want messages, calling visit on each until it fails,
// and leaves the link without credit. What it returns it holds, unsettled.
//
// In rounds: credit for what is still wanted, then a drain, which makes
// the broker send what it has and answer with the credit spent, every
// transfer before the answer. A drain can end a round early (seen on
// 4.3.6: 512 of 1,000 ready messages in the first), so rounds go on until
// all wanted arrived, or a round brings nothing within amqp1FirstWait:
// fewer are ready than the depth said (another consumer took some).
//
// When ctx ends mid-round the credit is drained all the same, under a
// bound of its own, and what it brings is held (not visited): a message
// released while the link still had credit would come straight back on it
// (a quorum queue hands returned messages out first) and be detached
// unsettled, a delivery counted.
func (b *amqp1Receiver) take(ctx context.Context, want int, visit func(*amqp1.Message) error) ([]*amqp1.Message, error) {
	var held []*amqp1.Message
	var visitErr, linkErr error
	size := 0 // of the bodies taken
	hold := func(m *amqp1.Message) {
		held = append(held, m)
		for _, d := range m.Data {
			size += len(d)
		}
	}
	take := func(m *amqp1.Message) {
		hold(m)
		if visitErr == nil {
			visitErr = visit(m)
		}
	}
	for linkErr == nil && visitErr == nil && ctx.Err() == nil && len(held) < want {
		// A round takes what its credit brings before any is visited: as
		// many as fit amqp1RoundBytes by the sizes seen so far.
		round := want - len(held)
		if len(held) > 0 {
			round = min(round, max(16, amqp1RoundBytes/max(1, size/len(held))))
		} else {
			round = min(round, 256)
		}
		if err := b.rcv.IssueCredit(uint32(round)); err != nil { //nolint:gosec // round ≤ the peek limit
			linkErr = err
			break
		}
		// The round's first message shows the credit reached the broker
		// (go-amqp would merge a drain asked at once into the credit's
		// flow frame, dropping the credit).
		firstCtx, cancel := context.WithTimeout(ctx, amqp1FirstWait)
		m, err := b.receive(firstCtx)
		cancel()
		got := err == nil
		switch {
		case got:
			take(m)
		case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
			// Nothing yet (or stopped): the credit is drained below.
		default:
			linkErr = err
		}
		if linkErr == nil {
			linkErr = b.drain(ctx, take, hold)
		}
		if !got {
			break
		}
	}
	switch {
	case linkErr != nil:
		b.release(held) // fails: the link is gone (or the drain never answered)
		return held, &amqp1Ended{Held: len(held), Err: linkErr}
	case ctx.Err() != nil:
		// The credit was drained: what browse releases does not come back
		// on this link.
		return held, ctx.Err()
	}
	return held, visitErr
}

// receive waits under ctx for the next message, telling the browse's
// progress (tick) while it waits, as the 0-9-1 browse does.
func (b *amqp1Receiver) receive(ctx context.Context) (*amqp1.Message, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, broker.ProgressEvery)
		m, err := b.rcv.Receive(wctx, nil)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return m, err
		}
		if b.tick != nil {
			b.tick()
		}
	}
}

// drain spends the link's credit: the broker sends what it has, then
// answers; take gets every message that arrives before the answer. The
// drain is waited for under a bound of its own, not ctx: when ctx ends, the
// messages that still come are handed to hold, not take. An error is the
// link's, or a drain the broker did not answer.
func (b *amqp1Receiver) drain(ctx context.Context, take, hold func(*amqp1.Message)) error {
	drained := make(chan error, 1)
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	go func() {
		dctx, cancel := context.WithTimeout(context.Background(), amqp1Timeout)
		defer cancel()
		err := b.rcv.DrainCredit(dctx, nil)
		drained <- err
		stopRecv()
	}()
	for {
		m, err := b.receive(recvCtx)
		if err != nil {
			if recvCtx.Err() == nil {
				return err // the link's (the drain ends with it)
			}
			break // drained, or ctx ended: the drain is waited for below
		}
		take(m)
	}
	if err := <-drained; err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("the broker did not answer the drain")
		}
		return err
	}
	// What arrived with the answer (or after ctx ended).
	keep := take
	if ctx.Err() != nil {
		keep = hold
	}
	for m := b.rcv.Prefetched(); m != nil; m = b.rcv.Prefetched() {
		keep(m)
	}
	return nil
}

// release settles ms, in order, with the released outcome.
func (b *amqp1Receiver) release(ms []*amqp1.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), amqp1Timeout)
	defer cancel()
	var first error
	for _, m := range ms {
		if err := b.rcv.ReleaseMessage(ctx, m); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// restoreOrder undoes what releasing the browsed messages did to a quorum
// queue holding returned messages: they went behind the other returned
// ones. It takes messages again until it has taken back every one of ours
// (known by fingerprint), then releases ours first and the others after,
// in the order taken: the queue is as it was. Payloads are dropped as they
// arrive. When it cannot (ours were taken meanwhile, the link ended, ctx),
// it says how the order changed.
func (b *amqp1Receiver) restoreOrder(ctx context.Context, ours []string) (reordered string, taken int) {
	pending := map[string][]int{}
	for i, fp := range ours {
		pending[fp] = append(pending[fp], i)
	}
	own := make([]*amqp1.Message, len(ours))
	var others []*amqp1.Message
	found := 0
	var failed error
	for found < len(ours) && failed == nil {
		// Doubling: few rounds, and at most twice what is needed.
		credit := max(len(ours)-found, found+len(others))
		if err := b.rcv.IssueCredit(uint32(credit)); err != nil { //nolint:gosec // bounded by the queue
			failed = err
			break
		}
		for i := 0; i < credit && found < len(ours); i++ {
			rctx, cancel := context.WithTimeout(ctx, amqp1FirstWait)
			m, err := b.rcv.Receive(rctx, nil)
			cancel()
			if err != nil {
				failed = err
				break
			}
			fp := fingerprint(m)
			m.Data, m.Value, m.Sequence = nil, nil, nil
			if idx := pending[fp]; len(idx) > 0 {
				own[idx[0]], pending[fp] = m, idx[1:]
				found++
			} else {
				others = append(others, m)
			}
		}
	}
	// Stop the credit left over, keeping what it brought: under a bound of
	// its own, as ctx may have ended (released with credit left, a message
	// would come back on the link and be detached unsettled).
	dctx, cancel := context.WithTimeout(context.Background(), amqp1Timeout)
	if err := b.rcv.DrainCredit(dctx, nil); err == nil {
		for m := b.rcv.Prefetched(); m != nil; m = b.rcv.Prefetched() {
			m.Data, m.Value, m.Sequence = nil, nil, nil
			others = append(others, m)
		}
	} else if failed == nil {
		failed = err
	}
	cancel()
	var back []*amqp1.Message
	for _, m := range own {
		if m != nil {
			back = append(back, m)
		}
	}
	back = append(back, others...)
	taken = len(back)
	if err := b.release(back); err != nil {
		failed = err
	} else if found == len(ours) {
		return "", taken
	}
	why := "they were taken meanwhile"
	if failed != nil && !errors.Is(failed, context.DeadlineExceeded) {
		why = amqp1Reason(failed)
	}
	return fmt.Sprintf("the browsed messages went back behind the %s returned to the queue before them, and %d of %d could not be put back in front (%s)",
		topology.Plural(len(others), "other message", "other messages"), len(ours)-found, len(ours), why), taken
}

// fingerprint identifies a message whatever its deliveries: everything
// but the counters a delivery changes (the header's first-acquirer and
// delivery-count, x-acquired-count, x-delivery-count). Identical messages
// share one, and which of them goes first cannot be told anyway.
func fingerprint(m *amqp1.Message) string {
	h := sha256.New()
	if hd := m.Header; hd != nil {
		fmt.Fprintf(h, "h%v/%d/%d|", hd.Durable, hd.Priority, hd.TTL)
	}
	if p := m.Properties; p != nil {
		str := func(s *string) string {
			if s == nil {
				return "\x00"
			}
			return *s
		}
		tm := func(t *time.Time) int64 {
			if t == nil {
				return -1
			}
			return t.UnixMilli()
		}
		var ct, ce string
		if p.ContentType != nil {
			ct = string(*p.ContentType)
		}
		if p.ContentEncoding != nil {
			ce = string(*p.ContentEncoding)
		}
		fmt.Fprintf(h, "p%#v/%x/%q/%q/%q/%#v/%q/%q/%d/%d/%q|", p.MessageID, p.UserID, str(p.To), str(p.Subject), str(p.ReplyTo),
			p.CorrelationID, ct, ce, tm(p.AbsoluteExpiryTime), tm(p.CreationTime), str(p.GroupID))
	}
	anns := map[string]any{}
	for k, v := range m.Annotations {
		ks, _ := annotationKey(k)
		if ks != "x-acquired-count" && ks != "x-delivery-count" {
			anns[ks] = v
		}
	}
	fmt.Fprintf(h, "a%#v|ap%#v|", anns, m.ApplicationProperties) // fmt sorts map keys
	for _, d := range m.Data {
		fmt.Fprintf(h, "d%d:", len(d))
		h.Write(d)
	}
	fmt.Fprintf(h, "v%#v|s%#v", m.Value, m.Sequence)
	return string(h.Sum(nil))
}

func (b *amqp1Receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), amqp1Timeout)
	defer cancel()
	_ = b.rcv.Close(ctx)
}

// peekAMQP1 is a peek of q through an attached receiver: up to opt.Limit
// of the ready messages, decoded as the 0-9-1 peek decodes them. ended:
// the broker ended the browse (its link, or the session: see
// sessionEnded), and the result says so.
func peekAMQP1(ctx context.Context, b *amqp1Receiver, q topology.Queue, brokerVersion string, opt broker.PeekOptions, dec *decode.Decoder) (res *broker.PeekResult, redelivered int, ended *amqp1Ended, err error) {
	res = &broker.PeekResult{Queue: q.Name, Type: q.Type, Total: q.Messages, Ready: q.Ready, Messages: []broker.Message{}, PeekedAt: time.Now()}
	res.SideEffects = broker.PeekSideEffectsVia(broker.PeekReleased, q.Type, brokerVersion)
	want := opt.Limit
	if q.Ready < int64(want) {
		want = int(q.Ready)
	}
	// The same bounds, progress and hand-over as the 0-9-1 browse.
	run := broker.NewBrowseRun(res, opt, want)
	defer run.Finish()
	b.tick = run.Tick
	bctx := ctx
	if opt.Deadline > 0 {
		var cancel context.CancelFunc
		bctx, cancel = context.WithTimeout(ctx, opt.Deadline)
		defer cancel()
	}
	redelivered, reordered, err := b.browse(bctx, want, int(q.Ready), func(m *amqp1.Message) error {
		return run.Take(decodeAMQP1(m, run.Read(), opt.BodyPreview, dec))
	})
	if reordered != "" {
		res.SideEffects = append(res.SideEffects, reordered)
	}
	var end *amqp1Ended
	switch {
	case errors.As(err, &end):
		// The messages read are good; the broker returned them (and the
		// one it could not send) as after a crash.
		note := fmt.Sprintf("stopped after %s: %s; the messages the browse held went back as after a crash, each with a delivery counted (x-delivery-count +1)%s",
			topology.Plural(run.Read(), "message", "messages"), end.Error(), amqp1CrashHint(end.Err))
		res.Incomplete = note
		res.SideEffects = append(res.SideEffects, note)
		broker.NoteDeadLettered(res, q, brokerVersion)
		ended = end
	case errors.Is(err, broker.ErrStopBrowse):
	case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
		run.TimedOut() // what was read is good; the browse released what it held
	case err != nil:
		return nil, redelivered, nil, fmt.Errorf("peek %s: %w", q.Name, err)
	}
	if run.Read() == 0 && res.Incomplete == "" {
		res.SideEffects = []string{}
	}
	return res, redelivered, ended, nil
}

// amqp1CrashHint says what makes RabbitMQ fail to send a message over AMQP
// 1.0 when it says so: seen on 4.3.6, a 0-9-1 header holding a decimal
// (its conversion has no case for it).
func amqp1CrashHint(err error) string {
	if strings.Contains(err.Error(), "function_clause") {
		return " (RabbitMQ could not convert the next message for AMQP 1.0: a header holding a decimal does that)"
	}
	return ""
}
