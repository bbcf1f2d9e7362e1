package e2e

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestHTTPAddressTaken: another program holds cabinet.mcp.listen. The
// daemon starts anyway — hooks reach it and Home Assistant gets their
// states — says so in one log line naming the address and the key, and
// `cabinet doctor` shows it with what to change.
func TestHTTPAddressTaken(t *testing.T) {
	t.Parallel()
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	taken := holder.Addr().String()
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	r.d = startDaemon(t, append(r.env(), "CABINET_MCP_LISTEN="+taken), r.logs)
	r.d.waitLog("cabinet serve started", 20*time.Second)
	const unavailable = "MCP over HTTP is not available"
	line := r.d.log.AwaitLine(t, "the taken address reported", unavailable)
	if !strings.Contains(line, taken) || !strings.Contains(line, "cabinet.mcp.listen") {
		t.Errorf("log line %s\nwant the address %s and the key cabinet.mcp.listen", line, taken)
	}

	from := r.obs.Mark()
	r.hook("screensaver-start", "black")
	r.obs.AwaitMsg(from, r.topic("screensaver"), "ON")

	doc := r.doctorCheck("daemon")
	if doc.Status != "warn" || !strings.Contains(doc.Detail, taken) || !strings.Contains(doc.Detail, "cabinet.mcp.listen") {
		t.Errorf("cabinet doctor's daemon check = %+v, want a warning naming %s and cabinet.mcp.listen", doc, taken)
	}
	if n := r.d.log.Count(unavailable); n != 1 {
		t.Errorf("%d log lines say MCP over HTTP is unavailable, want 1", n)
	}
}
