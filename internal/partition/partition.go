// Package partition forwards TCP connections to a server until it is cut:
// a partition, or an outage, as a client of the server sees it. Tests put
// it between an operator and its API server.
package partition

import (
	"io"
	"net"
	"sync"
)

// Proxy forwards the connections it accepts on its address to a target.
type Proxy struct {
	target string

	mu    sync.Mutex
	l     net.Listener
	addr  string
	down  bool
	conns []net.Conn
}

// New listens on a free port of 127.0.0.1 and forwards to target
// (host:port). Close it when done.
func New(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, l: l, addr: l.Addr().String()}
	go p.serve(l)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

func (p *Proxy) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		p.forward(c)
	}
}

func (p *Proxy) forward(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		_ = c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.conns = append(p.conns, c, up)
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
}

// Cut closes every connection and closes new ones at once: the server
// is unreachable, though something accepts connections.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// Restore forwards new connections again after Cut.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// Refuse cuts the connections and stops listening, so that new ones are
// refused, as when the server's process is down.
func (p *Proxy) Refuse() {
	p.Cut()
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.l.Close()
}

// Listen listens again on the same address after Refuse, and forwards.
func (p *Proxy) Listen() error {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.l, p.down = l, false
	p.mu.Unlock()
	go p.serve(l)
	return nil
}

// Close stops the proxy.
func (p *Proxy) Close() { p.Refuse() }
