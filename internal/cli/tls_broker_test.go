package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ladder-tui/ladder/broker/rabbit"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TLS for real: a RabbitMQ node that speaks only amqps and https
// (scripts/rabbitmq.sh up --version 4.3 --tls CERTDIR), with a CA made
// here, stopped when the test ends.

const (
	envTestTLS  = "LADDER_TEST_TLS"
	tlsAMQPPort = "5676"
	tlsAPIPort  = "15676"
	tlsNodeName = "rabbit43tls"
	tlsEPMDPort = "4376"
	// tlsWait bounds starting and stopping the node (the script's own
	// waits are shorter: LADDER_RABBITMQ_WAIT).
	tlsWait = 3 * time.Minute
)

// tlsCerts is a throwaway CA, a server certificate it signed for
// 127.0.0.1 and localhost, and a second CA that signed nothing.
type tlsCerts struct {
	dir     string // ca.pem, server.pem, server-key.pem: rabbitmq.sh --tls
	ca      string
	otherCA string
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// newCA makes a self-signed CA certificate named cn.
func newCA(t *testing.T, cn string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, der
}

func makeTLSCerts(t *testing.T) tlsCerts {
	t.Helper()
	dir := t.TempDir()
	ca, caKey, caDER := newCA(t, "ladder test CA")
	_, _, otherDER := newCA(t, "ladder test CA (another)")
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano() + 1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := tlsCerts{dir: dir, ca: filepath.Join(dir, "ca.pem"), otherCA: filepath.Join(dir, "other-ca.pem")}
	writePEM(t, c.ca, "CERTIFICATE", caDER)
	writePEM(t, c.otherCA, "CERTIFICATE", otherDER)
	writePEM(t, filepath.Join(dir, "server.pem"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, "server-key.pem"), "PRIVATE KEY", keyDER)
	return c
}

// rabbitmqSh runs scripts/rabbitmq.sh with args, bounded by tlsWait.
func rabbitmqSh(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tlsWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "..", "scripts", "rabbitmq.sh"), args...)
	cmd.Env = append(os.Environ(), "LADDER_RABBITMQ_WAIT=90")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// tlsNodeProcesses lists the TLS node's processes still running: its
// beam (whose command line names its epmd port, not the node) and its epmd
// (whose environment does).
func tlsNodeProcesses() []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || len(cmdline) == 0 { // gone, or a zombie
			continue
		}
		cmd := strings.ReplaceAll(string(cmdline), "\x00", " ")
		env, _ := os.ReadFile(filepath.Join(p, "environ"))
		if strings.Contains(cmd, "-epmd_port "+tlsEPMDPort+" ") || strings.Contains(cmd, tlsNodeName+"@") ||
			strings.Contains("\x00"+string(env)+"\x00", "\x00ERL_EPMD_PORT="+tlsEPMDPort+"\x00") {
			found = append(found, filepath.Base(p)+": "+clipTo(cmd, 80))
		}
	}
	return found
}

func clipTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// waitPort polls addr until it accepts a connection, for at most d.
func waitPort(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// requireTLSBroker starts the TLS node with a fresh CA and stops it when
// the test ends. It skips, saying why, when it cannot (not root, no 4.3
// chroot), unless LADDER_REQUIRE_BROKER=1 and LADDER_TEST_TLS=1, where it
// fails; LADDER_TEST_TLS=0 skips it.
func requireTLSBroker(t *testing.T) tlsCerts {
	t.Helper()
	if os.Getenv(envTestTLS) == "0" {
		t.Skipf("%s=0", envTestTLS)
	}
	stop := t.Skipf
	if os.Getenv("LADDER_REQUIRE_BROKER") == "1" && os.Getenv(envTestTLS) == "1" {
		stop = t.Fatalf
	}
	if os.Geteuid() != 0 {
		stop("the TLS broker needs root (a node in the 4.3 chroot, started by scripts/rabbitmq.sh up --version 4.3 --tls)")
	}
	state := os.Getenv("LADDER_STATE_DIR")
	if state == "" {
		state = "/var/tmp/ladder"
	}
	if _, err := os.Stat(filepath.Join(state, "rabbitmq-4.3", "root", "usr", "sbin", "rabbitmq-server")); err != nil {
		stop("no RabbitMQ 4.3 chroot under %s (run scripts/rabbitmq.sh up --version 4.3): %v", state, err)
	}
	certs := makeTLSCerts(t)
	start := time.Now()
	t.Cleanup(func() {
		out, err := rabbitmqSh("down", "--version", "4.3", "--tls")
		if err != nil {
			t.Errorf("rabbitmq.sh down --version 4.3 --tls: %v\n%s", err, out)
		}
		deadline := time.Now().Add(30 * time.Second)
		for left := tlsNodeProcesses(); len(left) > 0; left = tlsNodeProcesses() {
			if time.Now().After(deadline) {
				t.Errorf("the TLS node is still running after down:\n%s", strings.Join(left, "\n"))
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	})
	if out, err := rabbitmqSh("up", "--version", "4.3", "--tls", certs.dir); err != nil {
		t.Fatalf("rabbitmq.sh up --version 4.3 --tls: %v\n%s", err, out)
	}
	for _, port := range []string{tlsAMQPPort, tlsAPIPort} {
		if err := waitPort("127.0.0.1:"+port, 60*time.Second); err != nil {
			t.Fatalf("the TLS node does not answer on %s: %v", port, err)
		}
	}
	t.Logf("TLS node up in %s", time.Since(start).Round(100*time.Millisecond))
	// Only the flags each case gives count.
	for _, env := range []string{"LADDER_AMQP_URL", "LADDER_API_URL", "LADDER_PROMETHEUS_URL", "LADDER_VHOST", "LADDER_CA_CERT", "LADDER_INSECURE_SKIP_VERIFY"} {
		t.Setenv(env, "")
	}
	return certs
}

func TestTLSBroker(t *testing.T) {
	certs := requireTLSBroker(t)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		urls := []string{
			"--amqp-url", "amqps://guest:guest@" + net.JoinHostPort(host, tlsAMQPPort) + "/",
			"--api-url", "https://" + net.JoinHostPort(host, tlsAPIPort),
		}
		t.Run("ping "+host, func(t *testing.T) {
			code, out, errOut := runLadder(t, append([]string{"ping", "--ca-cert", certs.ca}, urls...)...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			want := "ok: RabbitMQ 4.3"
			if !strings.HasPrefix(out, want) || !strings.Contains(out, "amqps://guest:xxxxx@"+host) || !strings.Contains(out, "API https://"+host) {
				t.Errorf("want %q… naming the amqps and https URLs, got %q", want, out)
			}
		})
		t.Run("topology "+host, func(t *testing.T) {
			code, out, errOut := runLadder(t, append([]string{"topology", "--ca-cert", certs.ca}, urls...)...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if !strings.HasPrefix(out, "vhost / · RabbitMQ 4.3") {
				t.Errorf("topology: %q", out)
			}
		})
	}

	urls := []string{
		"--amqp-url", "amqps://guest:guest@127.0.0.1:" + tlsAMQPPort + "/",
		"--api-url", "https://127.0.0.1:" + tlsAPIPort,
	}
	for _, c := range []struct {
		name, cmd, ca, where, hint string
	}{
		// ping dials AMQP first; topology reads the management API only.
		{"ping without --ca-cert", "ping", "", "RabbitMQ at 127.0.0.1:" + tlsAMQPPort, "give its CA with --ca-cert"},
		{"ping with another CA", "ping", certs.otherCA, "RabbitMQ at 127.0.0.1:" + tlsAMQPPort, "not the --ca-cert CA"},
		{"topology without --ca-cert", "topology", "", "management API at 127.0.0.1:" + tlsAPIPort, "give its CA with --ca-cert"},
		{"topology with another CA", "topology", certs.otherCA, "management API at 127.0.0.1:" + tlsAPIPort, "not the --ca-cert CA"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{c.cmd}, urls...)
			if c.ca != "" {
				args = append(args, "--ca-cert", c.ca)
			}
			line := oneLine(t, "", args...)
			if !strings.Contains(line, c.where) || !strings.Contains(line, "signed by an unknown authority") || !strings.Contains(line, c.hint) {
				t.Errorf("want one line naming %s, the unknown authority and %q, got %q", c.where, c.hint, line)
			}
			if n := strings.Count(line, "unknown authority"); n != 1 {
				t.Errorf("%q says it %d times", line, n)
			}
			for _, goText := range []string{"x509:", "tls: failed", "possibly because", "candidate authority", "Get \"", "overview:"} {
				if strings.Contains(line, goText) {
					t.Errorf("Go's TLS error text %q in %q", goText, line)
				}
			}
		})
	}

	// A quorum queue on 4.3 is browsed over AMQP 1.0: amqps to the same
	// port, the same CA, the vhost as the open frame's hostname.
	t.Run("peek a quorum queue over AMQP 1.0", func(t *testing.T) {
		r, err := rabbit.Config{AMQPURL: "amqps://guest:guest@localhost:" + tlsAMQPPort + "/", APIURL: "https://localhost:" + tlsAPIPort, CACertFile: certs.ca}.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		q := testQueue(t, r, "tls-qq", 3, amqp.Table{"x-queue-type": "quorum"})
		for _, host := range []string{"127.0.0.1", "localhost"} {
			code, out, errOut := runLadder(t, "--read-only", "peek", q, "-o", "json", "--ca-cert", certs.ca,
				"--amqp-url", "amqps://guest:guest@"+net.JoinHostPort(host, tlsAMQPPort)+"/", "--api-url", "https://"+net.JoinHostPort(host, tlsAPIPort))
			if code != exitOK {
				t.Fatalf("%s: exit %d, %q", host, code, errOut)
			}
			if !strings.Contains(out, "browsed over AMQP 1.0 and released") || strings.Contains(out, "AMQP 1.0 failed") || strings.Count(out, `"message_id"`) != 3 {
				t.Fatalf("%s: %s", host, out)
			}
		}
	})

	t.Run("amqp:// at the TLS port", func(t *testing.T) {
		line := oneLine(t, "", "ping", "--amqp-url", "amqp://guest:guest@127.0.0.1:"+tlsAMQPPort+"/", "--api-url", "https://127.0.0.1:"+tlsAPIPort, "--ca-cert", certs.ca)
		if !strings.Contains(line, "127.0.0.1:"+tlsAMQPPort) || !strings.Contains(line, "does not speak AMQP") {
			t.Errorf("%q", line)
		}
	})
}
