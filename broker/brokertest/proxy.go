package brokertest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy in front of a broker port, for faults a test
// cannot ask a shared broker for: it stops forwarding (a stall: a paused
// VM, a hung network path), closes every connection (a killed node: the
// kernel sends FIN) or resets them (RST).
type Proxy struct {
	t      testing.TB
	l      net.Listener
	target string
	// stalled: bytes are read and dropped, nothing is forwarded.
	stalled atomic.Bool
	mu      sync.Mutex
	// clients are the accepted connections, ups the proxy's own to the
	// target (same order); half are those Close half-closed.
	clients, ups, half []net.Conn
	// down counts the bytes forwarded from the target; at faultAt (> 0)
	// fault runs once, before the byte that crosses it is forwarded.
	down    atomic.Int64
	faultAt atomic.Int64
	fault   func()
	once    sync.Once
}

// NewProxy listens on a free local port and forwards to target (host:port)
// until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{t: t, l: l, target: target}
	go p.accept()
	t.Cleanup(func() { l.Close(); p.closeAll() })
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

func (p *Proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.clients, p.ups = append(p.clients, c), append(p.ups, up)
		p.mu.Unlock()
		go p.pipe(c, up, false)
		go p.pipe(up, c, true)
	}
}

// pipe copies from src to dst while the proxy is not stalled; stalled, it
// reads and drops (so neither side sees a full buffer or a close).
func (p *Proxy) pipe(src, dst net.Conn, fromTarget bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && fromTarget {
			if at := p.faultAt.Load(); at > 0 && p.down.Add(int64(n)) >= at {
				p.once.Do(p.fault)
			}
		}
		if n > 0 && !p.stalled.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

// After makes fault (Stall, Close or Reset) happen once the target has
// sent n more bytes: in the middle of a stream of deliveries, say.
func (p *Proxy) After(n int64, fault func()) {
	p.fault = fault
	p.faultAt.Store(p.down.Load() + n)
}

// StopListening closes the proxy's port: a new connection is refused, as
// at a stopped node's address (what is connected stays until Close).
func (p *Proxy) StopListening() { p.l.Close() }

// Stall stops forwarding in both directions: connections stay open and
// silent.
func (p *Proxy) Stall() { p.stalled.Store(true) }

// Close closes every proxied connection (the client sees a FIN), as a
// killed node's kernel does. The client side is only half-closed: a full
// close with bytes of the client's still unread would send an RST instead
// (a reset, not a close); it is closed when the test ends.
func (p *Proxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.ups {
		c.Close()
	}
	for _, c := range p.clients {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
			p.half = append(p.half, c)
			continue
		}
		c.Close()
	}
	p.clients, p.ups = nil, nil
}

// closeAll closes everything, half-closed connections too.
func (p *Proxy) closeAll() {
	p.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.half {
		c.Close()
	}
	p.half = nil
}

// Reset resets every proxied connection (RST).
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range append(p.clients, p.ups...) {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
	p.clients, p.ups = nil, nil
}

// DelayedAPI is an HTTP proxy in front of a management API that holds
// every answer back by its delay (changeable while it runs).
type DelayedAPI struct {
	URL   string
	delay atomic.Int64
	mu    sync.Mutex
	paths []string
}

// Paths are the request paths it was asked, in order.
func (d *DelayedAPI) Paths() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.paths)
}

// NewDelayedAPI proxies to api (http://host:port) with no delay.
func NewDelayedAPI(t testing.TB, api *url.URL) *DelayedAPI {
	t.Helper()
	d := &DelayedAPI{}
	rp := httputil.NewSingleHostReverseProxy(api)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.paths = append(d.paths, r.URL.EscapedPath())
		d.mu.Unlock()
		if wait := time.Duration(d.delay.Load()); wait > 0 {
			select {
			case <-time.After(wait):
			case <-r.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	d.URL = srv.URL
	return d
}

// SetDelay holds every answer from now on back by delay.
func (d *DelayedAPI) SetDelay(delay time.Duration) { d.delay.Store(int64(delay)) }
