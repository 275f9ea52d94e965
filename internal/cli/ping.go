package cli

import (
	"fmt"

	"github.com/ladder-tui/ladder/broker/rabbit"

	"github.com/spf13/cobra"
)

// pingResult is `ladder ping -o json`.
type pingResult struct {
	AMQPURL       string `json:"amqp_url"`
	APIURL        string `json:"api_url"`
	Vhost         string `json:"vhost"`
	BrokerVersion string `json:"broker_version"`
	ErlangVersion string `json:"erlang_version"`
}

func newPingCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "ping",
		Short: "Check that ladder reaches the broker over AMQP and the management API",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := a.resolve()
			if err != nil {
				return err
			}
			conn, err := r.DialAMQP(cmd.Context(), "ping")
			if err != nil {
				return err
			}
			defer conn.Close()
			api, err := r.API()
			if err != nil {
				return err
			}
			ov, err := api.Overview()
			if err != nil {
				return r.APIError("overview", err)
			}
			m, err := rabbit.NewManagement(r)
			if err != nil {
				return err
			}
			defer m.Close()
			if err := m.SameBroker(cmd.Context(), conn); err != nil {
				return err
			}
			res := pingResult{
				AMQPURL: r.RedactedAMQP(), APIURL: r.RedactedAPI(), Vhost: r.Vhost,
				BrokerVersion: ov.RabbitMQVersion, ErlangVersion: ov.ErlangVersion,
			}
			if a.json() {
				return writeJSON(a.stdout, res)
			}
			_, err = fmt.Fprintf(a.stdout, "ok: RabbitMQ %s (%s) at %s, API %s, vhost %s\n",
				res.BrokerVersion, "Erlang "+res.ErlangVersion, res.AMQPURL, res.APIURL, res.Vhost)
			return err
		},
	}
}
