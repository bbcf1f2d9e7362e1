package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/logfile"
	"github.com/batocera-cabinet/cabinet/daemon"
)

type serveCommand struct{ env *env }

func (c *serveCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "serve", "", `Run the resident daemon (the Batocera service): one MQTT connection with a last will,
hook events over /var/run/cabinet/cabinet.sock, the ES /runningGame watcher, live
configuration, and MCP. Logs to <state_dir>/cabinet.log (--log-stderr: to stderr).
Stops cleanly on SIGTERM/SIGINT.`, &sets)
	toStderr := fs.Bool("log-stderr", false, "log to stderr instead of the log file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	var out = c.env.Stderr
	if !*toStderr {
		f, err := logfile.Open(l.Config.Layout().Log(), 0, -1)
		if err != nil {
			return fmt.Errorf("open the log: %w", err)
		}
		defer f.Close()
		out = f
	}
	red := logfile.NewRedactor(out, l.Config.Secrets())
	pairing := rommStore(&l.Config)
	return daemon.Run(ctx, daemon.Options{Load: daemonLoader(c.env, sets), ConfigFile: l.File,
		WatchFiles: []string{pairing.TokenPath(), pairing.DevicePath()}, Version: buildVersion(), LogOut: red, Redactor: red})
}

// daemonLoader reads the configuration as the daemon's, at start and after
// every edit of the file.
func daemonLoader(e *env, sets setFlag) func() (daemon.Loaded, error) {
	unlimited := slices.Contains(e.Environ, benchUnlimited+"=1")
	return func() (daemon.Loaded, error) {
		l, err := daemonConfig(loadConfig(e, sets), buildVersion())
		l.Config.Tools.NoRateLimits = unlimited
		return l, err
	}
}

// benchUnlimited=1 in cabinet serve's environment lifts the tools' rate limits, for the benchmarks
// that launch a game dozens of times in a row (BenchmarkPlayByName). Not a setting: nothing a
// household configures turns the limits off.
const benchUnlimited = "CABINET_BENCH_NO_RATE_LIMITS"
