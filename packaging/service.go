package packaging

import (
	"fmt"
	"path"
	"strings"

	"github.com/batocera-cabinet/cabinet/hook/paths"
)

// ServiceScript renders the Batocera user service that runs `cabinet
// serve` (/userdata/system/services/cabinet; enable it with
// `batocera-services enable cabinet`). Batocera starts enabled services at
// boot with `start` (in the background) and stops them with `stop` at
// shutdown, waiting for it. It supervises nothing, so the script respawns
// the daemon if it ever exits without being asked to.
func (l Layout) ServiceScript() Script {
	run := l.RunDir
	firewall := ""
	if l.CloseRetroArchPort {
		// Batocera's root filesystem forgets firewall rules at every
		// reboot: the service puts the rule back at each start.
		if fw, err := RetroArchPortRules(l.RetroArchPort); err == nil {
			firewall = indent(fw.Add, "    ")
		}
	}
	return Script{
		Path: path.Join(l.ServicesDir, l.ServiceName),
		Mode: 0o755,
		Content: fmt.Sprintf(`#!/bin/bash
# Cabinet daemon (cabinet serve), a Batocera user service. Installed by Cabinet.
#   batocera-services enable %[3]s && batocera-services start %[3]s
BIN=%[1]s
RUN=%[2]s
case "$1" in
  start)
%[5]s    mkdir -p "$RUN"
    rm -f "$RUN/stopping"
    (
      while [ ! -e "$RUN/stopping" ]; do
        "$BIN" serve </dev/null >/dev/null 2>>"$RUN/serve.stderr"
        [ -e "$RUN/stopping" ] && break
        sleep 5 # it exited on its own: start it again, calmly
      done
    ) </dev/null >/dev/null 2>&1 &
    echo $! > "$RUN/service.pid"
    ;;
  stop)
    touch "$RUN/stopping"
    pid=$(cat "$RUN/%[4]s" 2>/dev/null)
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do # cabinet serve publishes "offline" and closes the store: give it 5 s
      [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    kill "$(cat "$RUN/service.pid" 2>/dev/null)" 2>/dev/null
    rm -f "$RUN/service.pid"
    # Events a wrapper handed over while the daemon stopped are in RAM
    # (its inbox on tmpfs): store and publish them before the machine goes.
    "$BIN" hook --drain </dev/null >/dev/null 2>&1
    ;;
  status)
    pid=$(cat "$RUN/%[4]s" 2>/dev/null)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "running (pid $pid)"; else echo stopped; exit 1; fi
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
`, shQuote(l.Binary), shQuote(run), l.ServiceName, paths.PIDFileName, firewall),
	}
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, ln := range lines {
		if strings.TrimSpace(ln) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(ln)
	}
	return b.String()
}
