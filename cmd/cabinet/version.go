package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/batocera-cabinet/cabinet/hook/store"
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
	asJSON := fs.Bool("json", false, "print JSON: version, commit, go, os, arch, store_schema")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(versionInfo{
			Version:     buildVersion(),
			Commit:      buildCommit(),
			Go:          runtime.Version(),
			OS:          runtime.GOOS,
			Arch:        runtime.GOARCH,
			StoreSchema: store.SchemaVersion,
		})
	}
	fmt.Fprintf(c.env.Stdout, "cabinet %s (commit %s, %s, %s/%s)\n", version, buildCommit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// versionInfo is `cabinet version --json`, which deploy scripts and the
// release checks read: keep the field names.
type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	// StoreSchema is the store layout this binary reads and writes; a
	// binary refuses a store of a newer schema, so a downgrade can check
	// first.
	StoreSchema int `json:"store_schema"`
}

// buildVersion is the version string used in HA device blocks and tool results.
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
