package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
)

type configCommand struct{ env *env }

// codedError is an error with its own exit status.
type codedError struct {
	msg  string
	code int
}

func (e *codedError) Error() string { return e.msg }
func (e *codedError) ExitCode() int { return e.code }

func (c *configCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "config", "", `Print the effective configuration: every cabinet.* key, its value (secrets masked)
and where it came from (default, file, env, flag), then the warnings. Exits 1 when a
value is invalid. Reads CABINET_CONFIG=FILE instead of /userdata/system/batocera.conf.`, &sets)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	id, idErr := l.Config.CabinetID()
	if *asJSON {
		type row struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Source string `json:"source"`
		}
		out := struct {
			File     string   `json:"file"`
			Keys     []row    `json:"keys"`
			Warnings []string `json:"warnings"`
			Errors   []string `json:"errors"`
		}{File: l.File, Warnings: append([]string{}, l.Warnings...), Errors: []string{}}
		for _, r := range l.Effective() {
			out.Keys = append(out.Keys, row{r[0], r[1], r[2]})
		}
		if l.Err != nil {
			out.Errors = append(out.Errors, splitErrors(l.Err)...)
		}
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.env.Stdout, "# read from %s\n", l.File)
		tw := tabwriter.NewWriter(c.env.Stdout, 0, 4, 2, ' ', 0)
		for _, r := range l.Effective() {
			fmt.Fprintf(tw, "%s=%s\t# %s\n", r[0], r[1], r[2])
		}
		tw.Flush()
		switch {
		case idErr != nil:
			fmt.Fprintf(c.env.Stdout, "# cabinet id: %v\n", idErr)
		case id == "":
			fmt.Fprintf(c.env.Stdout, "# cabinet id: not generated yet (the first hook or `cabinet serve` creates %s/id)\n", l.Config.StatePath())
		default:
			fmt.Fprintf(c.env.Stdout, "# cabinet id: %s\n", id)
		}
		for _, w := range l.Warnings {
			fmt.Fprintf(c.env.Stderr, "warning: %s\n", w)
		}
	}
	if l.Err != nil {
		if !*asJSON {
			for _, e := range splitErrors(l.Err) {
				fmt.Fprintf(c.env.Stderr, "error: %s\n", e)
			}
		}
		return &codedError{msg: "the configuration is invalid: fix the keys above", code: exitError}
	}
	return nil
}

// splitErrors flattens errors.Join.
func splitErrors(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}
