package daemon

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// msgHTTPUnavailable is the one line a taken cabinet.mcp.listen logs.
const msgHTTPUnavailable = "MCP over HTTP is not available: its address is taken; free it or set cabinet.mcp.listen to another address (hooks, MQTT and MCP over the socket go on)"

// A cabinet.mcp.listen that another program holds: the daemon still gets
// ready, hooks and MQTT work, the problem is logged once and shown in the
// status (for doctor) with the address and the key; once the address is
// free MCP over HTTP comes up by itself.
func TestHTTPAddressTaken(t *testing.T) {
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken := holder.Addr().String()
	r := newRig(t, func(c *Config) { c.HTTP.Listen = taken }, nil)
	st := r.d.Status()
	if st.MCPHTTP != "" || !strings.Contains(st.MCPHTTPError, taken) || !strings.Contains(st.MCPHTTPError, "cabinet.mcp.listen") {
		t.Fatalf("status = %+v; want no address and an error naming %s and cabinet.mcp.listen", st, taken)
	}
	if r.d.HTTPAddr() != "" {
		t.Errorf("HTTPAddr = %q while the address is taken", r.d.HTTPAddr())
	}

	// Hooks go on.
	ev := r.stamp().Event(tracker.KindScreensaverStart, tracker.SourceES)
	r.deliver(ev)
	r.retained(r.settings.StateTopic(haentities.Screensaver), func(s string) bool { return s == "ON" })

	// Retries, quietly: still one line however long it lasts.
	for range 5 {
		r.clock.Advance(time.Minute)
	}
	if n := len(r.logs.entries(msgHTTPUnavailable)); n != 1 {
		t.Errorf("%d lines say MCP over HTTP is unavailable, want 1", n)
	}

	holder.Close()
	// Each look moves the clock to the next retry.
	cabinettest.Await(t, "MCP over HTTP up once its address was free", r.logs.written, func() bool {
		if r.d.HTTPAddr() != "" {
			return true
		}
		r.clock.Advance(time.Minute)
		return false
	})
	r.logged("MCP over HTTP listening", nil)
	if st := r.d.Status(); st.MCPHTTP != taken || st.MCPHTTPError != "" {
		t.Errorf("status after recovery = %+v", st)
	}
}
