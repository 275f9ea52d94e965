// Package broker is the contract between ladder's front ends (the UI, the
// commands) and a broker: the roles a client plays, the values they
// exchange, the errors they refuse with, and the rules of what a read
// costs (peek cost, consent, releases, other readers). It does no I/O of
// its own. Around it: the use cases written once on these roles in
// broker/usecase (dump, replay, unblock, confirm-then-bind, group scan,
// sample); the live client in broker/rabbit (with its refresh budget) and
// the simulation in broker/sim; message decoding in broker/decode; AMQP's
// wire rules in broker/wire; a move's preview budgets in broker/preview;
// pacing in broker/pace; the dump file in broker/dumpfile. Who may act and
// where it is audited: internal/gate, the only wrapper that knows which
// calls act.
package broker

import (
	"context"
	"slices"
	"time"

	"github.com/ladder-tui/ladder/broker/pace"
	"github.com/ladder-tui/ladder/retry"
	"github.com/ladder-tui/ladder/retry/moveplan"
	"github.com/ladder-tui/ladder/retry/topology"
)

// The broker's roles: small interfaces named by what their callers need.
// The live client (broker/rabbit) and the simulation (broker/sim) both
// implement every one of them, composed into Client; a use case takes only
// the roles it uses (usecase.Dump a DumpSource, usecase.Replay a
// ReplayTarget, …), so a test's fake stubs no more than that.

// TopologyReader reads what a use case routes by and words its reports
// with: the vhost's topology and the broker's version.
type TopologyReader interface {
	// Topology reads the vhost's queues, exchanges and bindings fresh: what
	// the planner routes with (replay).
	Topology(ctx context.Context) (topology.Vhost, error)
	// BrokerVersion is the broker's RabbitMQ version ("4.3.6").
	BrokerVersion(ctx context.Context) (string, error)
	// Vhost is the virtual host this client works in.
	Vhost() string
}

// Snapshotter reads a vhost for a refresh.
type Snapshotter interface {
	// Snapshot reads the vhost: queues with depths and rates, topology,
	// discovered ladders and findings.
	Snapshot(ctx context.Context) (*Snapshot, error)
}

// Peeker browses a queue.
type Peeker interface {
	// Peek browses the first messages of a queue without removing them and
	// reports what that cost.
	Peek(ctx context.Context, queue string, opt PeekOptions) (*PeekResult, error)
}

// Mover moves messages between queues.
type Mover interface {
	// Move moves or re-publishes messages loss-free. progress, if not nil, is
	// called from the moving goroutine after each settled batch.
	Move(ctx context.Context, req MoveRequest, progress func(MoveProgress)) (*MoveReport, error)
}

// Publisher publishes messages loss-free.
type Publisher interface {
	// Publish publishes a batch loss-free: confirmed, mandatory where asked,
	// returns watched (correlated by HeaderMoveID); a wait queue named by
	// an Outgoing is declared first. One outcome per message, in order.
	// An error without outcomes: nothing of the batch was published; with
	// them: why publishing stopped short (a refusal that closed the
	// channel, a lost connection, ctx), each outcome saying the rest.
	Publish(ctx context.Context, batch []Outgoing) ([]Outcome, error)
	// PublishLimits are the sizes its broker takes in one message, which
	// a replay checks every line against first (zero: none known).
	PublishLimits(ctx context.Context) (PublishLimits, error)
}

// Drainer takes messages off a queue.
type Drainer interface {
	// Drain takes up to limit ready messages of a queue (0: as many as are
	// ready when it starts) in order; each is acked only after handle
	// returns true with no error, kept (returned to the queue, in order,
	// when Drain ends) when it returns false. An error stops the drain.
	Drain(ctx context.Context, queue string, limit int, handle func(*Message) (bool, error)) (int, error)
}

// Session is the client's own state: the vhosts it can switch to, whether
// it refuses mutations, and closing it.
type Session interface {
	// Vhosts lists the virtual hosts the user can see.
	Vhosts(ctx context.Context) ([]string, error)
	// ReadOnly reports whether mutations are refused.
	ReadOnly() bool
	Close() error
}

// Client is every role: what the terminal UI and the commands hold. The
// live broker (rabbit.Live) and the embedded demo simulation (sim.Sim) both
// implement it, so neither the UI nor a command knows which one it talks
// to.
type Client interface {
	Snapshotter
	AllVhostsReader
	TopologyReader
	Peeker
	Mover
	Publisher
	Drainer
	Auditor
	Failoverer
	Session
}

// Snapshot is one refresh of a vhost.
type Snapshot struct {
	Vhost         string
	BrokerVersion string
	TakenAt       time.Time
	Topology      topology.Vhost
	Ladders       []retry.Ladder
	Findings      []topology.Finding
	// Refresh is how often to read this vhost again so that an idle TUI
	// costs the broker no more than the management UI's Queues page (see
	// the live client's refresh budget); 0 is BaseRefresh.
	Refresh time.Duration
	// Trends are what the reads before this one tell of each queue, by
	// name: its depth over them, how fast it fills or drains (see
	// broker/analysis). A queue read once has none yet.
	Trends map[string]Trend
}

// Trend is what the history of reads tells of one queue: what every face
// shows beside its depth, computed once by the analysis.
type Trend struct {
	// Depths are its latest depths, oldest first (at most TrendLen).
	Depths []int64
	// Net is the change of its depth per second (negative: draining);
	// NetKnown is false until two reads, or the broker's rate, tell.
	Net      float64
	NetKnown bool
	// Drain is how long what it holds takes to leave.
	Drain Drain
	// Growth is how much it grew within the last
	// topology.DLQGrowingWindow of reads (what the growth sort orders by);
	// GrowthKnown once two reads fall within it.
	Growth      int64
	GrowthKnown bool
}

// BaseRefresh is the TUI's refresh on a small vhost; a bigger one is read
// less often (the live client's refresh budget, Snapshot.Refresh).
const BaseRefresh = 2 * time.Second

// TrendLen bounds Trend.Depths: the widest sparkline drawn.
const TrendLen = 64

// Drain is how long a queue's messages take to leave, as the analysis
// reads its depth, its net rate and its TTL.
type Drain struct {
	Kind DrainKind
	// In is the time to drain (DrainETA) or the bound (DrainBound).
	In time.Duration
}

// DrainKind says what a Drain knows.
type DrainKind int

const (
	// DrainEmpty: nothing to drain.
	DrainEmpty DrainKind = iota
	// DrainETA: draining, empty in about In at the net rate.
	DrainETA
	// DrainBound: every message now there leaves within In (a queue TTL),
	// filling or not.
	DrainBound
	// DrainGrowing: filling, with no bound.
	DrainGrowing
	// DrainUnknown: neither draining nor known to fill.
	DrainUnknown
)

// Queue returns the named queue of the snapshot.
func (s *Snapshot) Queue(name string) (topology.Queue, bool) {
	for _, q := range s.Topology.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return topology.Queue{}, false
}

// PeekOptions bound a peek.
type PeekOptions struct {
	Limit int  // messages to browse (default 100)
	Force bool // peek a quorum queue even near its delivery limit
	// BodyPreview bounds the bytes of each body kept (default 4 KiB).
	BodyPreview int
	// Deadline (> 0) bounds how long the read takes: a browse still
	// reading then stops with what it has, and Incomplete says so. 0: no
	// deadline but the context's.
	Deadline time.Duration
	// Progress, when set, hears how far the read is, from the reading
	// goroutine: at most ten times a second, and once when it ends (Done).
	Progress func(PeekProgress)
	// Each, when set, is handed every message in queue order as it is read,
	// and the result's Messages stay empty: nothing is kept (a dump writes
	// each and lets it go). Its error ends the read and is returned, but
	// ErrStopBrowse ends it as complete.
	Each func(*Message) error
}

// PeekResult is what a peek saw and what it cost. JSON field names are a
// contract (`ladder peek -o json`).
type PeekResult struct {
	Queue string `json:"queue"`
	Type  string `json:"type"`
	Total int64  `json:"total"`
	Ready int64  `json:"ready"`
	// SideEffects says, in plain words, what the peek changed (redelivered
	// flags, quorum delivery counts); empty for streams.
	SideEffects []string `json:"side_effects"`
	// Released counts messages that left the queue while the peek ran (see
	// SideEffects): on a wait queue, overdue messages the peek uncovered.
	Released int64 `json:"released"`
	// ReleasedTo is where released messages went (the queue's dead-letter
	// route, or "dropped"), ReleasedAt when the peek saw them gone.
	ReleasedTo string     `json:"released_to,omitempty"`
	ReleasedAt *time.Time `json:"released_at,omitempty"`
	Messages   []Message  `json:"messages"`
	// HoLBasis says how due times were computed ("" when no message has a TTL).
	HoLBasis string `json:"hol_basis,omitempty"`
	// PeekedAt is when the messages were read: due times count from it.
	PeekedAt time.Time `json:"peeked_at"`
	// Incomplete, when set, says why the peek stopped before its limit: a
	// message the AMQP client could not read (it is also a side effect).
	Incomplete string `json:"incomplete,omitempty"`
	// Others, when set, is what ladder saw of the queue's other readers
	// (see NoteLeft): they hold messages no peek sees.
	Others *PeekOthers `json:"others,omitempty"`
	// Partial says why the messages shown are not the whole queue from
	// its head (see NotePartial); absent when they are.
	Partial []string `json:"partial,omitempty"`
	// read is what a browse read, kept or handed to PeekOptions.Each:
	// how many, how many came redelivered, and the delivery counts they
	// carried (what NoteDeadLettered and the own-redelivery discount read,
	// which Messages cannot tell when Each took them).
	read        int
	redelivered int
	counts      []deliveryCount
	// seen is what the messages read showed about queues' roles
	// (Evidence), kept or handed on alike.
	seen    topology.Evidence
	browsed bool // read, redelivered and counts are kept (by a BrowseRun)
	// wanted is what the browse was to read (BrowseRun.Want); reordered:
	// a redelivered message came after a fresh one (see BrowseRun.Take).
	wanted      int
	reordered   bool
	hitDeadline bool // the deadline (PeekOptions.Deadline) stopped the read
}

// deliveryCount is a browsed message's x-delivery-count as delivered.
type deliveryCount struct {
	position int
	count    int64
}

// HitDeadline reports whether the deadline (PeekOptions.Deadline) stopped
// the read.
func (r *PeekResult) HitDeadline() bool { return r.hitDeadline }

// Read is how many messages the browse read, kept or handed on.
func (r *PeekResult) Read() int {
	if r.browsed {
		return r.read
	}
	return len(r.Messages)
}

// Redeliveries is how many of them came redelivered (the broker counts
// them in the queue's redeliver rate).
func (r *PeekResult) Redeliveries() int {
	if r.browsed {
		return r.redelivered
	}
	n := 0
	for _, m := range r.Messages {
		if m.Redelivered {
			n++
		}
	}
	return n
}

// deliveryCounts are the x-delivery-counts the read messages carried.
func (r *PeekResult) deliveryCounts() []deliveryCount {
	if r.browsed {
		return r.counts
	}
	var out []deliveryCount
	for _, m := range r.Messages {
		if n, ok := retry.HeaderInt(m.Headers["x-delivery-count"]); ok && n > 0 {
			out = append(out, deliveryCount{m.Position, n})
		}
	}
	return out
}

// Message is one peeked message, decoded by the retry engine.
type Message struct {
	Position    int                `json:"position"`
	Exchange    string             `json:"exchange"`
	RoutingKey  string             `json:"routing_key"`
	Redelivered bool               `json:"redelivered"`
	Properties  Properties         `json:"properties"`
	Headers     retry.Headers      `json:"headers"`
	Retry       retry.RetryState   `json:"retry"`
	Deaths      []retry.Death      `json:"deaths"`
	DeathErrors []retry.FieldError `json:"death_errors,omitempty"`
	Origin      *retry.Origin      `json:"origin"`
	// FailedIn is the queue the message failed in by its framework's
	// headers and naming (moveplan.FailedIn), "" for no framework's message
	// or when nothing says: where --to origin sends it, and what ties a
	// shared error queue to its endpoints (topology.Evidence).
	FailedIn string `json:"failed_in,omitempty"`
	// Seen is the best time known for when the message entered its retry
	// story (see seenTime) and SeenFrom where it was read (a Seen*
	// constant); zero and "" when nothing says.
	Seen     time.Time `json:"seen,omitzero"`
	SeenFrom string    `json:"seen_from,omitempty"`
	// Reached is when the message reached the queue it was read from, where
	// that is known, and ReachedFrom how (a Reached* constant): the time
	// of the death that dead-lettered it there, or the failure time of the
	// framework that published it there.
	Reached     time.Time         `json:"reached,omitzero"`
	ReachedFrom string            `json:"reached_from,omitempty"`
	HoL         *topology.HoLMark `json:"hol"`
	BodySize    int               `json:"body_size"`
	// BodyDigest identifies the whole body (see moveplan.BodyDigest), even
	// when only a preview of it is kept.
	BodyDigest  string `json:"body_sha256"`
	BodyPreview string `json:"body_preview"`
	// Body holds at most PeekOptions.BodyPreview bytes of the body, raw.
	Body          []byte `json:"-"`
	BodyTruncated bool   `json:"body_truncated"`
}

// Properties are the AMQP basic properties of a message.
type Properties struct {
	MessageID       string     `json:"message_id,omitempty"`
	Timestamp       *time.Time `json:"timestamp,omitempty"`
	Expiration      string     `json:"expiration,omitempty"`
	ContentType     string     `json:"content_type,omitempty"`
	ContentEncoding string     `json:"content_encoding,omitempty"`
	DeliveryMode    uint8      `json:"delivery_mode,omitempty"`
	Priority        uint8      `json:"priority,omitempty"`
	CorrelationID   string     `json:"correlation_id,omitempty"`
	ReplyTo         string     `json:"reply_to,omitempty"`
	Type            string     `json:"type,omitempty"`
	UserID          string     `json:"user_id,omitempty"`
	AppID           string     `json:"app_id,omitempty"`
	// TimestampRaw is the timestamp as sent (Unix seconds) when it is no
	// time JSON can write, Timestamp then nil: JavaScript clients send
	// Date.now(), milliseconds where AMQP means seconds (foo-foo-mq), a
	// year past 9999. Kept as the number sent, not read as milliseconds.
	TimestampRaw int64 `json:"timestamp_raw,omitempty"`
}

// MoveRequest describes one move or re-publish.
type MoveRequest struct {
	From  string
	To    moveplan.Target
	Delay time.Duration // 0: publish now
	Limit int           // 0: every message ready now
	// Positions, when set, moves only the messages at these queue positions
	// (as a peek numbered them); the others stay, in order.
	Positions []int
	// PositionIDs, when given, are the message ids expected at Positions
	// (same order; "" skips the check): a message found elsewhere is left
	// in place and reported, not moved by mistake.
	PositionIDs  []string
	DryRun       bool
	ResetRetries bool
	// Expect is the plan the user confirmed (a dry run's Planned): a
	// message whose route changed since stays in the source with a note.
	Expect []moveplan.Route
	// Where chooses the messages (--where); Limit then counts chosen ones.
	Where moveplan.Where
	// MaxMoves (> 0) leaves messages ladder moved that often in place
	// (the loop guard), unless Force.
	MaxMoves int
	Force    bool
	// ForcePeek lets the dry run read the source where that counts a
	// delivery toward a quorum queue's delivery limit (no costless browse:
	// RabbitMQ before 4.3): the user accepted that cost (--force-peek, or
	// yes to the question). Without it such a dry run is refused before it
	// touches the queue, as a peek is (read-only mode refuses it anyway).
	ForcePeek bool
	// Rate (> 0) paces publishes to that many messages a second.
	Rate float64
	// Hold, when set, pauses the move while held (the TUI's p).
	Hold *pace.Hold
	// Pick chooses messages by identity, each with its own delay (ladder
	// unblock, see PrepareUnblock); the others stay, as with Where.
	Pick []moveplan.Pick
}

// Chooses reports whether the move looks at every message and takes only
// those Where or Pick choose.
func (r MoveRequest) Chooses() bool { return !r.Where.Empty() || r.Pick != nil }

// Spec is the request as the planner reads it, at now.
func (r MoveRequest) Spec(now time.Time) moveplan.Spec {
	return moveplan.Spec{From: r.From, To: r.To, Delay: r.Delay, ResetRetries: r.ResetRetries,
		Positions: r.Positions, PositionIDs: r.PositionIDs, Expect: r.Expect,
		Where: r.Where, Now: now, MaxMoves: r.MaxMoves, Force: r.Force, Pick: r.Pick}
}

// MoveReport is what a move did. JSON field names are a contract
// (`ladder move -o json`).
type MoveReport struct {
	Requested int `json:"requested"`
	Moved     int `json:"moved"`
	Failed    int `json:"failed"`
	Returned  int `json:"returned"`
	Skipped   int `json:"skipped"` // the plan left them in the source (Planned says why)
	// Unmatched counts messages looked at that --where did not choose.
	Unmatched int    `json:"unmatched"`
	Target    string `json:"target"`
	// Via counts messages per way (direct, tier, delayed_exchange,
	// delay_queue): in a dry run those planned, else those moved. Routes
	// says the same per tier or wait queue passed through.
	Via     map[topology.Via]int  `json:"via"`
	Routes  []moveplan.RouteCount `json:"routes"`
	DelayMS int64                 `json:"delay_ms"`
	DryRun  bool                  `json:"dry_run"`
	// DuplicatesPossible is true when a message may have reached the target
	// without its source ack (connection lost between confirm and ack).
	DuplicatesPossible bool `json:"duplicates_possible"`
	// DuplicatesAtMost bounds how many messages may be in both places: those
	// published but unconfirmed, confirmed but not acked, and acked since
	// the broker last showed it had processed the acks, when a channel was
	// lost.
	DuplicatesAtMost int `json:"duplicates_at_most"`
	// Planned is every message's plan in a dry run; after a move, the
	// plans of the messages left in the source (with why).
	Planned []moveplan.Route `json:"planned,omitempty"`
	Notes   []string         `json:"notes,omitempty"`
	// MovedIDs name the messages moved (for the audit log): the id, or
	// sha256:<digest> of the body for one without.
	MovedIDs []string `json:"-"`
}

// NewMoveReport starts the report of req.
func NewMoveReport(req MoveRequest) *MoveReport {
	return &MoveReport{Target: req.To.String(), DelayMS: req.Delay.Milliseconds(), DryRun: req.DryRun, Via: map[topology.Via]int{}, Routes: []moveplan.RouteCount{}}
}

// Count adds one moved (or, in a dry run, planned) message on r's way.
func (rep *MoveReport) Count(r moveplan.Route) {
	rep.Routes = moveplan.AddRoute(rep.Routes, r)
	rep.Via[r.Via]++
	if r.Via == topology.ViaDelayQueue && r.CrashRisk == "" {
		rep.Note(moveplan.AtLeastOnceNote)
	}
	if !rep.DryRun {
		rep.MovedIDs = append(rep.MovedIDs, moveplan.IDOf(r.MessageID, r.BodyDigest))
	}
}

// Add folds more, the report of a move that went on over the same source
// where rep's stopped (through another node), into rep: what moved, its
// ways, the notes and the bound on duplicates add up; what is left in the
// source (failed, returned, skipped, not chosen, and their plans) is
// more's, which looked at all of it again; what was asked stays rep's.
func (rep *MoveReport) Add(more *MoveReport) {
	if more == nil {
		return
	}
	rep.Moved += more.Moved
	rep.Failed, rep.Returned, rep.Skipped, rep.Unmatched = more.Failed, more.Returned, more.Skipped, more.Unmatched
	rep.Planned = more.Planned
	for via, n := range more.Via {
		rep.Via[via] += n
	}
	for _, rc := range more.Routes {
		i := slices.IndexFunc(rep.Routes, func(c moveplan.RouteCount) bool { return c.Via == rc.Via && c.Through == rc.Through })
		if i < 0 {
			rep.Routes = append(rep.Routes, rc)
			continue
		}
		rep.Routes[i].Count += rc.Count
	}
	rep.DuplicatesPossible = rep.DuplicatesPossible || more.DuplicatesPossible
	rep.DuplicatesAtMost += more.DuplicatesAtMost
	for _, n := range more.Notes {
		rep.Note(n)
	}
	rep.MovedIDs = append(rep.MovedIDs, more.MovedIDs...)
}

// Note adds a note once.
func (rep *MoveReport) Note(n string) {
	if n != "" && !slices.Contains(rep.Notes, n) {
		rep.Notes = append(rep.Notes, n)
	}
}

// Outgoing is one message to publish, as its plan says.
type Outgoing struct {
	Exchange, RoutingKey string
	Mandatory            bool
	Properties           Properties
	// Headers are plain values (see PlainHeaderValue); HeaderMoveID must be
	// set and unique within the batch.
	Headers retry.Headers
	Body    []byte
	// WaitQueue, when set, is declared with WaitQueueArgs first.
	WaitQueue     string
	WaitQueueArgs retry.Headers
}

// Outcome is what became of one published message.
type Outcome struct {
	Confirmed bool // the broker took it (acked, not returned)
	Returned  bool // unroutable: sent back
	// NotSent: it was never published (Err says why), so it is surely not
	// on the broker; other errors leave that open.
	NotSent bool
	Err     error
}

// MoveProgress is reported while a move runs.
type MoveProgress struct {
	Total   int // requested (0 when unknown)
	Done    int // settled: moved + failed + returned + skipped
	Moved   int
	Failed  int
	Elapsed time.Duration
	// Blocked is the broker's reason ("low on memory") while a resource
	// alarm blocks publishing: the move or replay waits, taking nothing
	// more, until it clears. Empty when not blocked.
	Blocked string
}

// PublishLimits are the sizes a broker takes in one published message.
type PublishLimits struct {
	// MaxMessageSize bounds a body, as the broker counts it (its
	// max_message_size); 0: none known.
	MaxMessageSize int
	// Source says where MaxMessageSize comes from, for the skip reason.
	Source string
	// FrameMax bounds one frame (as negotiated): a message's properties and
	// headers travel in one. 0: none known.
	FrameMax int
}

// Headers ladder writes on every moved message.
const (
	// HeaderMoveID ("<run>/<n>") ties a basic.return to the publish it
	// answers (returns carry no delivery tag) and lets consumers drop the
	// duplicate a crash between confirm and ack can leave.
	HeaderMoveID = "x-ladder-move-id"
)

// Subject is what --where reads of a message a peek decoded: its retry
// state, deaths and origin as the peek shows them.
func (m *Message) Subject() moveplan.Subject {
	s := moveplan.Subject{Headers: m.Headers, Deaths: m.Deaths, Origin: m.Origin, Retry: m.Retry, Body: m.Body}
	if m.Properties.Timestamp != nil {
		s.Timestamp = *m.Properties.Timestamp
	}
	return s
}
