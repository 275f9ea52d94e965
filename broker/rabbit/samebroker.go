package rabbit

import (
	"context"
	"net"

	"github.com/ladder-tui/ladder/broker"

	amqp "github.com/rabbitmq/amqp091-go"
)

// brokerIdentity is what a broker says it is: its cluster's name and the
// version of the node that answered.
type brokerIdentity struct{ cluster, version string }

// amqpIdentity is what the AMQP handshake's server properties say.
func amqpIdentity(conn *amqp.Connection) brokerIdentity {
	cluster, _ := conn.Properties["cluster_name"].(string)
	version, _ := conn.Properties["version"].(string)
	return brokerIdentity{cluster, version}
}

// SameBroker checks that the AMQP connection and the management API (its
// overview's cluster_name and rabbitmq_version) name the same cluster:
// versions may differ within a cluster mid-upgrade, names may not. A side
// that says no name is not held against the other. The error says which
// address answered what, so the user can fix the URL.
func (r *Resolved) SameBroker(conn *amqp.Connection, apiCluster, apiVersion string) error {
	return r.sameBroker(conn, brokerIdentity{apiCluster, apiVersion})
}

func (r *Resolved) sameBroker(conn *amqp.Connection, api brokerIdentity) error {
	got := amqpIdentity(conn)
	if got.cluster == "" || api.cluster == "" || got.cluster == api.cluster {
		return nil
	}
	addr := net.JoinHostPort(r.AMQP.Hostname(), r.Port())
	return connErr(broker.ErrTwoBrokers, nil, "two brokers: %s (AMQP) is cluster %s%s, %s (management API) is %s%s; give --api-url of the AMQP broker",
		addr, got.cluster, versionNote(got.version), r.APIURL.Host, api.cluster, versionNote(api.version))
}

func versionNote(v string) string {
	if v == "" {
		return ""
	}
	return ", RabbitMQ " + v
}

// SameBroker checks conn (dialled from m's configuration) against the
// management API's overview (ping; every Live client on its own).
func (m *Management) SameBroker(ctx context.Context, conn *amqp.Connection) error {
	id, err := m.identity(ctx)
	if err != nil {
		return err
	}
	return m.r.sameBroker(conn, id)
}

// identity is the management API's cluster name and version (cached with
// the version, see BrokerVersion).
func (m *Management) identity(ctx context.Context) (brokerIdentity, error) {
	v, err := m.BrokerVersion(ctx)
	if err != nil {
		return brokerIdentity{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return brokerIdentity{cluster: m.cluster, version: v}, nil
}
