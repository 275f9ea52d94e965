package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"
)

// sshTitle is what a session's screen shows once the home screen is drawn
// with the broker's ladders ("LADDERS (400)").
const sshTitle = "LADDERS"

// sshReadyTimeout bounds how long a session may take to show sshTitle (20
// sessions at once on a busy 2-core 3.10 took up to 2 min).
const sshReadyTimeout = 5 * time.Minute

// sshKey writes a new ed25519 private key to keyFile (OpenSSH format, 0600)
// and prints its authorized-keys line (role=read-only) on stdout.
func sshKey(keyFile string) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := gossh.MarshalPrivateKey(priv, "ladder-bench")
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		return err
	}
	pk, err := gossh.NewPublicKey(pub)
	if err != nil {
		return err
	}
	fmt.Printf("role=read-only %s ladder-bench\n", strings.TrimSpace(string(gossh.MarshalAuthorizedKey(pk))))
	return nil
}

// sshSession is one of sshSessions' sessions.
type sshSession struct {
	i      int
	client *gossh.Client
	sess   *gossh.Session
	stdin  io.WriteCloser
	stderr bytes.Buffer // what the server said on stderr (a refusal)
	ready  time.Duration
	done   chan error // the session's end (Wait)
	err    error
}

// sshSessions opens n SSH sessions to addr with the private key in keyFile,
// each with an 80×24 pty, waits until each shows sshTitle, keeps them open
// for secs seconds (their output drained), then ends them with q. It
// prints a line per session (ready after how long, or its error), then
// "all N sessions ready" once every one is; an error when any failed.
func sshSessions(addr, keyFile string, n int, secs time.Duration) error {
	b, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	signer, err := gossh.ParsePrivateKey(b)
	if err != nil {
		return fmt.Errorf("%s: %w", keyFile, err)
	}
	start := time.Now()
	sessions := make([]*sshSession, n)
	var wg sync.WaitGroup
	for i := range n {
		s := &sshSession{i: i, done: make(chan error, 1)}
		sessions[i] = s
		wg.Go(func() {
			s.err = s.open(addr, signer, start)
			if s.err != nil {
				fmt.Printf("session %02d: %v\n", i, s.err)
			} else {
				fmt.Printf("session %02d: ready in %v\n", i, s.ready.Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
	var errs []error
	for _, s := range sessions {
		if s.err != nil {
			errs = append(errs, fmt.Errorf("session %02d: %w", s.i, s.err))
		}
	}
	if len(errs) == 0 {
		fmt.Printf("all %d sessions ready in %v\n", n, time.Since(start).Round(time.Millisecond))
		time.Sleep(secs)
	}
	for _, s := range sessions {
		if s.sess == nil {
			continue
		}
		select {
		case err := <-s.done:
			if s.err == nil {
				errs = append(errs, fmt.Errorf("session %02d ended before its time: %v %s", s.i, err, strings.TrimSpace(s.stderr.String())))
			}
			continue
		default:
		}
		_, _ = io.WriteString(s.stdin, "q")
	}
	for _, s := range sessions {
		if s.client == nil {
			continue
		}
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			if s.err == nil {
				errs = append(errs, fmt.Errorf("session %02d did not end within 10 s of q", s.i))
			}
		}
		s.client.Close()
	}
	if len(errs) == 0 {
		fmt.Printf("all %d sessions closed\n", n)
	}
	return errors.Join(errs...)
}

// open connects, asks for the pty and the shell, and waits until the
// screen shows sshTitle; the output is drained until the session ends.
func (s *sshSession) open(addr string, signer gossh.Signer, start time.Time) error {
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{
		User: fmt.Sprintf("bench%02d", s.i),
		Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		// A local server made for the benchmark: its host key is new.
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         30 * time.Second,
	})
	if err != nil {
		return err
	}
	s.client = c
	sess, err := c.NewSession()
	if err != nil {
		return err
	}
	if err := sess.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{gossh.ECHO: 0}); err != nil {
		return fmt.Errorf("pty: %w", err)
	}
	s.stdin, err = sess.StdinPipe()
	if err != nil {
		return err
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		return err
	}
	sess.Stderr = &s.stderr
	if err := sess.Shell(); err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	s.sess = sess
	shown := make(chan struct{})
	go func() {
		// Until the title shows, the screen so far without its escape
		// sequences; then only drained.
		var seen []byte
		waiting := true
		buf := make([]byte, 32<<10)
		for {
			k, err := out.Read(buf)
			if waiting {
				seen = append(seen, buf[:k]...)
				if strings.Contains(ansi.Strip(string(seen)), sshTitle) {
					waiting, seen = false, nil
					close(shown)
				} else if len(seen) > 4<<20 {
					seen = seen[len(seen)-1<<20:]
				}
			}
			if err != nil {
				break
			}
		}
		s.done <- sess.Wait()
	}()
	select {
	case <-shown:
		s.ready = time.Since(start)
		return nil
	case err := <-s.done:
		s.done <- err
		return fmt.Errorf("ended before showing %s: %v %s", sshTitle, err, strings.TrimSpace(s.stderr.String()))
	case <-time.After(sshReadyTimeout):
		return fmt.Errorf("did not show %s within %v", sshTitle, sshReadyTimeout)
	}
}
