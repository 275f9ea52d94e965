package rabbit

import (
	"context"
	"net/url"

	"github.com/ladder-tui/ladder/retry/topology"
)

// Policies lists the vhost's user and operator policies. A queue's
// effective_policy_definition lags a new policy by the management stats
// interval; this list does not (a running move reads it to see a length
// limit added mid-move: topology.EffectivePolicy). Operator policies a user
// may not list read as none.
func (m *Management) Policies(ctx context.Context, vhost string) (user, operator []topology.PolicyDef, err error) {
	v := url.PathEscape(vhost)
	if err := m.getJSON(ctx, "policies of vhost "+vhost, "policies/"+v, nil, &user); err != nil {
		return nil, nil, err
	}
	if err := m.getJSON(ctx, "operator policies of vhost "+vhost, "operator-policies/"+v, nil, &operator); err != nil {
		operator = nil
	}
	return user, operator, nil
}
