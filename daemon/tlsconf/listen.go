package tlsconf

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// recordHandshake is the first byte of every TLS connection (a handshake
// record); no HTTP/1 request line or HTTP/2 preface starts with it.
const recordHandshake = 0x16

// plainRefusal is the body of the answer to a plain HTTP request on a port
// that serves only TLS.
const plainRefusal = "this port speaks only HTTPS (cabinet.mcp.tls_only=1): use https:// in the URL\n"

// ListenOptions configure Listen.
type ListenOptions struct {
	// Plain lets connections that do not start a TLS handshake through as
	// plain HTTP; without it they are answered 400 and closed.
	Plain bool
	// SniffTimeout bounds the wait for a connection's first byte (default
	// 10 s, the HTTP server's header timeout).
	SniffTimeout time.Duration
}

// Listen serves TLS with cfg and, with opts.Plain, plain HTTP on the same
// listener: each connection's first byte says which, so one host:port (and
// one URL, but for the scheme) does both, and no second port or key is
// needed. TLS connections are returned as *tls.Conn, before their
// handshake, so that http.Server runs it under its own timeouts, sets
// Request.TLS and offers HTTP/2. The first byte is read on a goroutine per
// connection: a client that connects and says nothing holds only its own
// goroutine, never Accept.
func Listen(inner net.Listener, cfg *tls.Config, opts ListenOptions) net.Listener {
	if opts.SniffTimeout <= 0 {
		opts.SniffTimeout = 10 * time.Second
	}
	l := &sniffListener{inner: inner, cfg: cfg, opts: opts, ready: make(chan accepted), done: make(chan struct{})}
	go l.run()
	return l
}

type sniffListener struct {
	inner net.Listener
	cfg   *tls.Config
	opts  ListenOptions
	ready chan accepted
	done  chan struct{}
	once  sync.Once
}

type accepted struct {
	c   net.Conn
	err error
}

// run accepts from the inner listener until it fails for good. A temporary
// failure (too many open files) is passed on, as http.Server backs off on
// it, and retried after a pause of its own.
func (l *sniffListener) run() {
	pause := 5 * time.Millisecond
	for {
		c, err := l.inner.Accept()
		if err != nil {
			select {
			case l.ready <- accepted{err: err}:
			case <-l.done:
				return
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() && !isTemporary(err) {
				return
			}
			time.Sleep(pause)
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 5 * time.Millisecond
		go l.sniff(c)
	}
}

// isTemporary is net.Error's deprecated Temporary, which is still how
// accept(2)'s EMFILE and ENFILE say that waiting helps.
func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

func (l *sniffListener) sniff(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(l.opts.SniffTimeout))
	br := bufio.NewReaderSize(c, 16) // the minimum; only what Peek needs is read
	first, err := br.Peek(1)
	c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	pc := &peekedConn{Conn: c, r: br}
	var out net.Conn = pc
	switch {
	case first[0] == recordHandshake:
		out = tls.Server(pc, l.cfg)
	case !l.opts.Plain:
		c.SetWriteDeadline(time.Now().Add(l.opts.SniffTimeout))
		fmt.Fprintf(c, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
			len(plainRefusal), plainRefusal)
		c.Close()
		return
	}
	select {
	case l.ready <- accepted{c: out}:
	case <-l.done:
		c.Close()
	}
}

// Accept returns the next connection whose first byte has come.
func (l *sniffListener) Accept() (net.Conn, error) {
	select {
	case a := <-l.ready:
		return a.c, a.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; connections still being sniffed are closed.
func (l *sniffListener) Close() error {
	err := net.ErrClosed
	l.once.Do(func() {
		close(l.done)
		err = l.inner.Close()
	})
	return err
}

func (l *sniffListener) Addr() net.Addr { return l.inner.Addr() }

// peekedConn reads through the reader that peeked, so the first byte is
// not lost; the rest goes straight to the connection once it is drained.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) {
	if p.r != nil {
		if p.r.Buffered() > 0 {
			return p.r.Read(b)
		}
		p.r = nil
	}
	return p.Conn.Read(b)
}
