package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// runResult is one direct run of the binary.
type runResult struct {
	Stdout, Stderr []byte
	Err            error
	Took           time.Duration // spawn to exit
}

// run executes `cabinet ARGS…` directly (a real argv, no shell) with conf as
// CABINET_CONFIG: what the configgen script does, and how the tests feed
// argv that ES's quoting could not produce.
func (c *cabinet) run(conf string, args ...string) runResult {
	c.t.Helper()
	// cabinettest.Deadline, far above any budget, only turns a hook that
	// hangs into a failure instead of a stuck test.
	ctx, cancel := context.WithTimeout(context.Background(), cabinettest.Deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, cabinetBin, args...)
	cmd.Env = append(os.Environ(), "CABINET_CONFIG="+conf)
	cmd.Dir = filepath.Join(c.root, "userdata")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := runResult{Stdout: out.Bytes(), Stderr: errb.Bytes(), Err: err, Took: time.Since(start)}
	if ctx.Err() != nil {
		c.t.Fatalf("cabinet %q hung for %v", clipArgs(args), cabinettest.Deadline)
	}
	return r
}

// hook runs `cabinet hook ARGS…` with the cabinet's own config.
func (c *cabinet) hook(args ...string) runResult {
	c.t.Helper()
	return c.run(c.conf, append([]string{"hook"}, args...)...)
}

// logLine is one line of cabinet.log (zerolog JSON).
type logLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	Error   string `json:"error"`
	Cause   string `json:"cause"`
	Hint    string `json:"hint"`
	raw     string
}

// logLines reads cabinet.log.
func (c *cabinet) logLines() []logLine {
	b, _ := os.ReadFile(filepath.Join(c.state, "cabinet.log"))
	var out []logLine
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		var ll logLine
		if json.Unmarshal([]byte(l), &ll) != nil {
			ll = logLine{Level: "UNPARSABLE", Message: l}
		}
		ll.raw = l
		out = append(out, ll)
	}
	return out
}

// atLeast keeps lines at level warn or above ("warn", "error", "fatal").
func atLeastWarn(lines []logLine) []logLine {
	var out []logLine
	for _, l := range lines {
		switch l.Level {
		case "warn", "error", "fatal", "panic", "UNPARSABLE":
			out = append(out, l)
		}
	}
	return out
}

// isDeadlineMiss reports a hook run that left messages queued because its
// budget ran out (on a loaded machine the store's fsyncs can eat it).
func isDeadlineMiss(l logLine) bool {
	return l.Message == "mqtt publish incomplete" && strings.Contains(l.Error, "context deadline exceeded")
}

// withoutDeadlineMisses drops those lines: tests of something else count
// the rest.
func withoutDeadlineMisses(lines []logLine) []logLine {
	var out []logLine
	for _, l := range lines {
		if !isDeadlineMiss(l) {
			out = append(out, l)
		}
	}
	return out
}

func raws(lines []logLine) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + l.raw + "\n")
	}
	return b.String()
}

// clipArgs shortens argv for messages.
func clipArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if len(a) > 60 {
			a = a[:60] + "…"
		}
		out[i] = a
	}
	return out
}
