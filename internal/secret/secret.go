// Package secret is where ladder's passwords come from. Every connection
// (AMQP 0-9-1, AMQP 1.0, the management API, Prometheus) asks its
// Credentials when it is made, never keeps what it got: a password file
// rotated on disk is read by the next connection, without a restart.
package secret

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// Credentials give the user and password to log in with now. A provider
// that holds only a password (a file, a variable, a prompt) returns user
// "": the connection's own user name is meant (see Login). A token
// provider returns the token as the password.
type Credentials interface {
	Credentials(ctx context.Context) (user, password string, err error)
}

// Static is a user and password known once for all: a URL's, a test's.
type Static struct{ User, Password string }

func (s Static) Credentials(context.Context) (string, string, error) {
	return s.User, s.Password, nil
}

// File is a password file read again at every call, by ReadFile's rule:
// a rotated file is what the next connection uses, and a file that became
// readable by others is refused then too.
type File struct {
	Path string
	// AllowReadable accepts a file its group or others may read: a
	// Kubernetes secret is mounted 0644 by default.
	AllowReadable bool
}

func (f File) Credentials(context.Context) (string, string, error) {
	pw, err := ReadFile(f.Path, f.AllowReadable)
	return "", pw, err
}

// Env is the password in an environment variable, read at every call; an
// unset or empty one is an error naming it.
type Env struct{ Name string }

func (e Env) Credentials(context.Context) (string, string, error) {
	v := os.Getenv(e.Name)
	if v == "" {
		return "", "", fmt.Errorf("$%s is not set", e.Name)
	}
	return "", v, nil
}

// Prompt asks for the password once per process (a person at a terminal
// is not asked again at every reconnect) and keeps the answer. A failed
// ask is not kept: the next call asks again.
type Prompt struct {
	ask func(context.Context) (string, error)
	mu  sync.Mutex
	pw  string
}

// NewPrompt is a Prompt that asks with ask (it reads the terminal).
func NewPrompt(ask func(context.Context) (string, error)) *Prompt {
	return &Prompt{ask: ask}
}

func (p *Prompt) Credentials(ctx context.Context) (string, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pw == "" {
		pw, err := p.ask(ctx)
		if err != nil {
			return "", "", err
		}
		if pw == "" {
			return "", "", fmt.Errorf("no password given")
		}
		p.pw = pw
	}
	return "", p.pw, nil
}

// Login is c for a connection whose user is user: c's own user when it
// names one, else user.
func Login(user string, c Credentials) Credentials { return login{user, c} }

type login struct {
	user string
	c    Credentials
}

func (l login) Credentials(ctx context.Context) (string, string, error) {
	u, p, err := l.c.Credentials(ctx)
	if err != nil {
		return "", "", err
	}
	if u == "" {
		u = l.user
	}
	return u, p, nil
}

// Named is c whose errors name where its secret comes from ("--password-file:
// permissions 0644 for …").
func Named(what string, c Credentials) Credentials { return named{what, c} }

type named struct {
	what string
	c    Credentials
}

func (n named) Credentials(ctx context.Context) (string, string, error) {
	u, p, err := n.c.Credentials(ctx)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", n.what, err)
	}
	return u, p, nil
}

// Pair is a user and the password it logged in with.
type Pair struct{ User, Password string }

// Seen keeps every password its watched providers gave, so that error
// text can be redacted of a password read after a rotation too. Its zero
// value is ready; a nil *Seen keeps nothing.
type Seen struct {
	mu    sync.Mutex
	pairs []Pair
}

// Add keeps a user and password (a URL's) as seen.
func (s *Seen) Add(user, password string) {
	if s == nil || password == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pairs {
		if p.User == user && p.Password == password {
			return
		}
	}
	s.pairs = append(s.pairs, Pair{user, password})
}

// Pairs are what was seen so far.
func (s *Seen) Pairs() []Pair {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Pair(nil), s.pairs...)
}

// Watch is c with every password it gives kept in s.
func (s *Seen) Watch(c Credentials) Credentials { return watched{s, c} }

type watched struct {
	s *Seen
	c Credentials
}

func (w watched) Credentials(ctx context.Context) (string, string, error) {
	u, p, err := w.c.Credentials(ctx)
	if err == nil {
		w.s.Add(u, p)
	}
	return u, p, err
}
