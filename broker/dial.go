package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"
)

// dialTimeout bounds the TCP connect and AMQP handshake.
const dialTimeout = 10 * time.Second

// ErrUnreachable marks errors where nothing answered at the broker's address.
var ErrUnreachable = errors.New("broker unreachable")

// DialAMQP opens an AMQP connection named "ladder <purpose>" so an operator
// can find (and close) it in the management UI.
func (r *Resolved) DialAMQP(ctx context.Context, purpose string) (*amqp.Connection, error) {
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("ladder " + purpose)
	cfg := amqp.Config{
		Properties: props,
		Vhost:      r.Vhost,
		// amqp091 writes ServerName into the config: give it its own copy.
		TLSClientConfig: r.tlsConfig(),
		Heartbeat:       10 * time.Second,
		Locale:          "en_US",
		Dial: func(network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// The deadline covers the handshake; amqp091 clears it afterwards.
			if err := conn.SetDeadline(time.Now().Add(dialTimeout)); err != nil {
				conn.Close()
				return nil, err
			}
			return conn, nil
		},
	}
	conn, err := amqp.DialConfig(r.AMQPURL, cfg)
	if err != nil {
		return nil, r.amqpDialError(err)
	}
	return conn, nil
}

func (r *Resolved) amqpDialError(err error) error {
	err = redactErr(err, r.AMQPURL)
	var ne *net.OpError
	if errors.As(err, &ne) {
		return fmt.Errorf("cannot reach RabbitMQ at %s (port %s): %w: %w",
			r.RedactedAMQP(), r.Port(), ErrUnreachable, err)
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.AccessRefused {
		return fmt.Errorf("RabbitMQ at %s refused the login (vhost %q): %w", r.RedactedAMQP(), r.Vhost, err)
	}
	if errors.Is(err, amqp.ErrCredentials) {
		return fmt.Errorf("RabbitMQ at %s refused the credentials: %w", r.RedactedAMQP(), err)
	}
	if errors.Is(err, amqp.ErrVhost) {
		return fmt.Errorf("RabbitMQ at %s: no access to vhost %q: %w", r.RedactedAMQP(), r.Vhost, err)
	}
	return fmt.Errorf("connect to RabbitMQ at %s: %w", r.RedactedAMQP(), err)
}

// API returns a management API client. Credentials travel in a header, never
// in the endpoint URL, so they cannot leak into error text.
func (r *Resolved) API() (*rabbithole.Client, error) {
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     r.tlsConfig(),
		TLSHandshakeTimeout: dialTimeout,
		DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
	}
	c, err := rabbithole.NewTLSClient(r.APIURL.String(), r.APIUser, r.APIPassword, tr)
	if err != nil {
		return nil, fmt.Errorf("--api-url %s: %w", r.RedactedAPI(), err)
	}
	c.SetTimeout(30 * time.Second)
	return c, nil
}

func (r *Resolved) transport() *http.Transport {
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     r.tlsConfig(),
		TLSHandshakeTimeout: dialTimeout,
		DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
		MaxIdleConnsPerHost: 4,
	}
}

// APIError describes a management API failure with the (credential-free) URL.
func (r *Resolved) APIError(what string, err error) error {
	err = redactErr(err, r.AMQPURL)
	var ne *net.OpError
	if errors.As(err, &ne) {
		return fmt.Errorf("%s: cannot reach the management API at %s (port %s): %w: %w",
			what, r.RedactedAPI(), apiPort(r.APIURL), ErrUnreachable, err)
	}
	var he rabbithole.ErrorResponse
	if errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%s: the management API at %s refused user %q: %w", what, r.RedactedAPI(), r.APIUser, err)
	}
	return fmt.Errorf("%s: management API at %s: %w", what, r.RedactedAPI(), err)
}

func apiPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func (r *Resolved) tlsConfig() *tls.Config {
	if r.TLS == nil {
		return nil
	}
	return r.TLS.Clone()
}
