package realromarr

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"strings"
)

// auditHook is a sitecustomize module (on ROMarr's PYTHONPATH, so Python imports it before
// ROMarr) that records every socket event to $CABINET_NETLOG through Python's audit hooks
// (PEP 578). It observes only: it never blocks or alters a call, and a failure to record is
// swallowed so it cannot break ROMarr. It runs on ROMarr's threads, so each event is one
// O_APPEND write.
const auditHook = `import json, os, sys
_path = os.environ.get("CABINET_NETLOG")
if _path:
    _fd = os.open(_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def _addr(a):
        if isinstance(a, tuple) and len(a) >= 2:
            host = str(a[0])
            return ("[%s]" % host if ":" in host else host) + ":" + str(a[1])
        if isinstance(a, bytes):
            return a.decode("utf-8", "replace")
        return str(a)

    def _hook(event, args):
        try:
            if event in ("socket.connect", "socket.bind", "socket.sendto"):
                fam = getattr(getattr(args[0], "family", None), "name", "")
                rec = {"op": event[7:], "family": fam, "addr": _addr(args[1])}
            elif event == "socket.getaddrinfo":
                rec = {"op": "resolve", "addr": _addr((args[0], args[1]))}
            elif event in ("socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"):
                rec = {"op": "resolve", "addr": str(args[0])}
            else:
                return
            os.write(_fd, (json.dumps(rec) + "\n").encode())
        except Exception:
            pass

    sys.addaudithook(_hook)
`

// NetEvent is one socket operation ROMarr made.
type NetEvent struct {
	Op     string `json:"op"`     // connect, bind, sendto, resolve
	Family string `json:"family"` // AF_INET, AF_INET6, AF_UNIX…; empty for resolve
	Addr   string `json:"addr"`   // host:port, [v6]:port, or a unix socket path
}

// Loopback reports whether the event stays on this machine: a unix socket, or a loopback
// address or name ("localhost", 127.0.0.0/8, ::1).
func (e NetEvent) Loopback() bool {
	if e.Family == "AF_UNIX" {
		return true
	}
	host := e.Addr
	if h, _, err := net.SplitHostPort(e.Addr); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (e NetEvent) String() string {
	if e.Family != "" {
		return e.Op + " " + e.Family + " " + e.Addr
	}
	return e.Op + " " + e.Addr
}

// NetEvents returns every socket operation ROMarr has made so far, in order.
func (s *Server) NetEvents() []NetEvent {
	f, err := os.Open(s.netlog)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []NetEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e NetEvent
		if json.Unmarshal([]byte(strings.TrimSpace(sc.Text())), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// Outgoing returns the events that leave this machine (see NetEvent.Loopback): for a test
// without network peers, it must be empty.
func (s *Server) Outgoing() []NetEvent {
	var out []NetEvent
	for _, e := range s.NetEvents() {
		if !e.Loopback() {
			out = append(out, e)
		}
	}
	return out
}
