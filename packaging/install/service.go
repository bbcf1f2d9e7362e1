package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ScriptService drives the installed service script the way Batocera does:
// `bash FILE start|stop`, as `batocera-services start|stop` and (for a file
// without its exec bit, the rule on exFAT and vfat) S99userservices run it.
type ScriptService struct {
	File string   // the service script
	Env  []string // its environment (nil: this process's)
	// Ping asks the daemon for its status over its socket.
	Ping func(ctx context.Context) error
	// StderrFile is where the service loop appends the daemon's stderr.
	StderrFile string
	// StopTimeout bounds `stop` (the script itself gives the daemon 5 s).
	StopTimeout time.Duration
}

func (s *ScriptService) run(ctx context.Context, action string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", s.File, action)
	cmd.Env = s.Env
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// start backgrounds the daemon's loop with its own stdio; a child
	// that kept ours open must not hold this call.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		msg := strings.TrimSpace(out.String())
		if ctx.Err() != nil {
			return fmt.Errorf("bash %s %s did not finish within %s: %s", s.File, action, timeout, msg)
		}
		return fmt.Errorf("bash %s %s: %v: %s", s.File, action, err, msg)
	}
	return nil
}

// Start runs the script's start (it returns at once; the daemon starts in
// the background).
func (s *ScriptService) Start(ctx context.Context) error { return s.run(ctx, "start", 10*time.Second) }

// Stop runs the script's stop, which waits for the daemon to publish
// offline and exit.
func (s *ScriptService) Stop(ctx context.Context) error {
	d := s.StopTimeout
	if d == 0 {
		d = 30 * time.Second
	}
	return s.run(ctx, "stop", d)
}

// Answering polls the daemon until it answers or ctx ends.
func (s *ScriptService) Answering(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		last = s.Ping(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return last
		case <-tick.C:
		}
	}
}

// Running says whether the daemon answers now.
func (s *ScriptService) Running(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return s.Ping(pctx) == nil
}

// Log is the end of the daemon's stderr as the service loop kept it.
func (s *ScriptService) Log() string {
	b, err := os.ReadFile(s.StderrFile)
	if err != nil {
		return ""
	}
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(b)
}
