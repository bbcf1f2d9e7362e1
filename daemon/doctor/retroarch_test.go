package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/packaging"
)

// fakeRetroArch answers GET_STATUS with st, or fails with err.
type fakeRetroArch struct {
	st  retroarch.Status
	err error
}

func (f fakeRetroArch) Status(context.Context) (retroarch.Status, error) { return f.st, f.err }

// portCheck is a RetroArchPortClosed that returns closed, err and
// counts its calls.
func portCheck(closed bool, err error, calls *int) func(context.Context) (bool, error) {
	return func(context.Context) (bool, error) {
		*calls++
		return closed, err
	}
}

// TestDoctorRetroArchPortExposure: with network commands on, the RetroArch
// check warns that the command port is open on every interface unless
// Cabinet's firewall rule keeps it to this machine.
func TestDoctorRetroArchPortExposure(t *testing.T) {
	playing := []Result{{Name: CheckGame, Status: OK, Detail: "playing Zelda (nes)"}}
	answering := fakeRetroArch{st: retroarch.Status{State: "PLAYING", Game: "Zelda"}}
	silent := fakeRetroArch{err: errors.New("no reply")}
	const closeHint = "anyone on the LAN can send it commands: `cabinet install --close-retroarch-port` keeps it to this machine"
	for _, tt := range []struct {
		name      string
		enabled   bool
		port      int
		ra        RetroArch
		earlier   []Result
		check     bool // RetroArchPortClosed set
		closed    bool
		err       error
		status    Status
		detail    string // contained in Detail
		hint      string // contained in Hint ("": none)
		fact      string // contained in a Fact ("": none)
		wantCalls int
	}{
		{name: "off", port: 55355, check: true, status: Fail, detail: "network commands are off", hint: "network_cmd_enable=true"},
		{name: "on, not checked", enabled: true, port: 55355, status: OK, detail: "network commands enabled"},
		{name: "on, rule in place", enabled: true, port: 55355, check: true, closed: true, status: OK,
			detail: "network commands enabled", fact: "UDP 55355 is kept to this machine (firewall rule cabinet-retroarch)", wantCalls: 1},
		{name: "on, open", enabled: true, port: 55355, check: true, status: Warn,
			detail: "network commands enabled in batocera.conf (checked live while a game runs); UDP 55355 is open on every interface", hint: closeHint, wantCalls: 1},
		{name: "on, other port", enabled: true, port: 4242, check: true, status: Warn, detail: "; UDP 4242 is open on every interface", hint: closeHint, wantCalls: 1},
		{name: "on, port unknown", enabled: true, check: true, status: Warn, detail: "; its command port is open on every interface", hint: closeHint, wantCalls: 1},
		{name: "on, check failed", enabled: true, port: 55355, check: true, err: errors.New("check the firewall rule: exit status 4: Permission denied (you must be root)"),
			status: Warn, detail: "UDP 55355 may be open on every interface (the firewall check failed)", hint: closeHint, fact: "you must be root", wantCalls: 1},
		{name: "on, no firewall", enabled: true, port: 55355, check: true, err: fmt.Errorf("check: %w", packaging.ErrNoFirewallTool),
			status: Warn, detail: "UDP 55355 is open on every interface and this cabinet has no firewall tool", hint: "network you trust", wantCalls: 1},
		{name: "playing, open", enabled: true, port: 55355, ra: answering, earlier: playing, check: true, status: Warn,
			detail: "RetroArch PLAYING Zelda (network commands on 127.0.0.1:55355); UDP 55355 is open on every interface", hint: closeHint, wantCalls: 1},
		{name: "playing, rule in place", enabled: true, port: 55355, ra: answering, earlier: playing, check: true, closed: true, status: OK,
			detail: "RetroArch PLAYING Zelda", fact: "kept to this machine", wantCalls: 1},
		// A game that does not answer keeps its own warning and hint.
		{name: "playing, no answer", enabled: true, port: 55355, ra: silent, earlier: playing, check: true, status: Warn,
			detail: "does not answer", hint: "standalone emulator"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			env := Env{NetworkCommands: tt.enabled, NetworkCommandPort: tt.port, RetroArch: tt.ra, RetroArchAddr: "127.0.0.1:55355"}
			if tt.check {
				env.RetroArchPortClosed = portCheck(tt.closed, tt.err, &calls)
			}
			r := checkRetroArch(context.Background(), env, tt.earlier)
			if r.Status != tt.status || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("result = %s %q, want %s containing %q", r.Status, r.Detail, tt.status, tt.detail)
			}
			if (tt.hint == "") != (r.Hint == "") || !strings.Contains(r.Hint, tt.hint) {
				t.Errorf("hint = %q, want %q", r.Hint, tt.hint)
			}
			if facts := strings.Join(r.Facts, "\n"); (tt.fact == "") != (facts == "") || !strings.Contains(facts, tt.fact) {
				t.Errorf("facts = %q, want %q", facts, tt.fact)
			}
			if calls != tt.wantCalls {
				t.Errorf("firewall checked %d times, want %d", calls, tt.wantCalls)
			}
		})
	}
}

// The warning reaches the terminal: a Warn prints its hint.
func TestDoctorRetroArchPortExposureWritten(t *testing.T) {
	calls := 0
	env := Env{NetworkCommands: true, NetworkCommandPort: 55355, RetroArchPortClosed: portCheck(false, nil, &calls)}
	rep := Run(context.Background(), []Check{{CheckRetroArch, func(ctx context.Context, earlier []Result) Result {
		return checkRetroArch(ctx, env, earlier)
	}}}, time.Second)
	var b strings.Builder
	rep.Write(&b, false)
	for _, want := range []string{"WARN retroarch", "UDP 55355 is open on every interface", "-> anyone on the LAN can send it commands", "All checks passed."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report:\n%s\nwant %q", b.String(), want)
		}
	}
}
