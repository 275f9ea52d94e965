package broker

import (
	"time"

	"github.com/ladder-tui/ladder/retry/moveplan"
)

// AuditEvent is one line of the audit trail: every mutation, as asked and
// as done. Field names are a contract (JSON lines).
type AuditEvent struct {
	Time   time.Time `json:"time"`
	Phase  string    `json:"phase"` // "start" or "done"
	User   string    `json:"user"`
	Host   string    `json:"host"`
	Broker string    `json:"broker"` // redacted
	Vhost  string    `json:"vhost"`
	// Context is the config file's named broker the action ran in ("" for
	// none).
	Context string `json:"context,omitempty"`
	// SSHUser and SSHKey name who asked, when the action came from a
	// session of `ladder serve --ssh`: the SSH user and the fingerprint
	// of the key it logged in with (SHA256:…).
	SSHUser string `json:"ssh_user,omitempty"`
	SSHKey  string `json:"ssh_key,omitempty"`
	// SSHKeyComment is the key's comment in the authorized-keys file.
	SSHKeyComment string `json:"ssh_key_comment,omitempty"`
	// Role is the SSH key's role (operator, read-only), or "mcp" for an
	// action of ladder mcp, whose client MCPClient names (as its
	// initialize request did).
	Role      string `json:"role,omitempty"`
	MCPClient string `json:"mcp_client,omitempty"`
	Action    string `json:"action"`
	From      string `json:"from"`
	Target    string `json:"target"`
	DelayMS   int64  `json:"delay_ms"`
	// DelaysMS (unblock): each picked message's remaining delay as the
	// preview showed it (rounded up to the second), in queue order; each
	// is published with what remains of it then (the report's routes).
	DelaysMS []int64  `json:"delays_ms,omitempty"`
	Limit    int      `json:"limit,omitempty"`
	Reset    bool     `json:"reset_retries,omitempty"`
	Selected int      `json:"selected,omitempty"`
	Rate     float64  `json:"rate,omitempty"`
	Where    []string `json:"where,omitempty"`
	// File and Lines: a replay's dump file and the lines it published; a
	// consuming dump's file.
	File  string `json:"file,omitempty"`
	Lines []int  `json:"lines,omitempty"`
	// Counts: a dump's or replay's totals (a move's are in Report).
	Counts map[string]int `json:"counts,omitempty"`
	// Messages are the ids of the messages acted on (sha256:<digest> for
	// one without an id).
	Messages []string `json:"messages,omitempty"`
	// ConfirmedRoutes are the routes of the plan the user confirmed.
	ConfirmedRoutes []moveplan.RouteCount `json:"confirmed_routes,omitempty"`
	Report          *MoveReport           `json:"report,omitempty"`
	Error           string                `json:"error,omitempty"`
}

// Auditor is how an action is audited: a use case built on the client's
// primitives (dump --consume, replay) opens its action with a start line
// and closes it with a done line; a move is audited by the gate itself.
// The live client and the simulation refuse (ErrUnaudited): only the gate
// (internal/gate) audits, so only a client behind it acts.
type Auditor interface {
	Audit(ev AuditEvent) error
}
