// Package doctor checks each layer a cabinet depends on — configuration,
// state dir, EmulationStation, the library, the running game, RetroArch's
// network commands, the MQTT broker, the installed hook scripts, and the
// household's RomM and ROMarr when they are configured, MCP over HTTP's
// certificate and Cloudflare Access, and the play-time rules with today's
// budget — and says for every failure what it means and what to do. It
// changes nothing: its probes are reads (ES GETs, RetroArch
// VERSION/GET_STATUS, an MQTT connect without a publish, RomM and ROMarr
// GETs, Access's public keys, the daemon's status, file reads).
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Status of one check.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn" // works, but something is off or not set up
	Fail Status = "fail" // broken
	Skip Status = "skip" // not checked: an earlier layer failed or the feature is off
)

// Result is one check's outcome.
type Result struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Hint   string `json:"hint,omitempty"`
	// Lines go on from Detail, one a line (a section such as the play
	// time's): always shown.
	Lines []string `json:"lines,omitempty"`
	Facts []string `json:"facts,omitempty"` // shown with --verbose
}

// Check is one layer's probe. Checks run in order; a check sees the results
// so far (to skip when the layer below failed).
type Check struct {
	Name string
	Run  func(ctx context.Context, earlier []Result) Result
}

// Report is the outcome of a run.
type Report struct {
	Results []Result `json:"checks"`
	OK      bool     `json:"ok"`
}

// Run runs the checks, each with its own timeout so one dead peer cannot
// stall the rest.
func Run(ctx context.Context, checks []Check, perCheck time.Duration) Report {
	var rep Report
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, perCheck)
		r := c.Run(cctx, rep.Results)
		cancel()
		if r.Name == "" {
			r.Name = c.Name
		}
		rep.Results = append(rep.Results, r)
	}
	rep.OK = len(rep.Results) > 0
	for _, r := range rep.Results {
		if r.Status == Fail {
			rep.OK = false
		}
	}
	return rep
}

// Failed reports whether the named check failed or was skipped.
func Failed(earlier []Result, name string) bool {
	for _, r := range earlier {
		if r.Name == name {
			return r.Status == Fail || r.Status == Skip
		}
	}
	return false
}

// Find returns the named result.
func Find(earlier []Result, name string) (Result, bool) {
	for _, r := range earlier {
		if r.Name == name {
			return r, true
		}
	}
	return Result{}, false
}

// Write renders the report for a terminal.
func (rep Report) Write(w io.Writer, verbose bool) {
	for _, r := range rep.Results {
		fmt.Fprintf(w, "%-4s %-10s %s\n", strings.ToUpper(string(r.Status)), r.Name, r.Detail)
		for _, l := range r.Lines {
			fmt.Fprintf(w, "     %-10s %s\n", "", l)
		}
		if r.Hint != "" && r.Status != OK {
			fmt.Fprintf(w, "     %-10s -> %s\n", "", r.Hint)
		}
		if verbose {
			for _, f := range r.Facts {
				fmt.Fprintf(w, "     %-10s    %s\n", "", f)
			}
		}
	}
	if rep.OK {
		fmt.Fprintln(w, "All checks passed.")
	} else {
		fmt.Fprintln(w, "Some checks failed; see the -> hints above.")
	}
}

// WriteJSON renders the report as JSON.
func (rep Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
