package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time: -ldflags "-X main.version=1.2.3 -X main.commit=abc".
var (
	version = "dev"
	commit  = ""
)

type versionCommand struct{ env *env }

func (c *versionCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "version", "", "Print Cabinet's version, commit, Go version and platform.", &sets)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(c.env.Stdout, "cabinet %s (commit %s, %s, %s/%s)\n", version, buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// Version is the version string used in HA device blocks and tool results.
func buildVersion() string { return version }

// buildCommit is the linked commit, else the VCS revision Go stamped.
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && dirty {
			rev += "-dirty"
		}
		if rev != "" {
			return rev
		}
	}
	return "unknown"
}
