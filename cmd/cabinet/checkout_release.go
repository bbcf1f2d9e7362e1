//go:build release

package main

import (
	"context"
	"fmt"
	"slices"
)

// Release builds (go build -tags release, as packaging/release and
// `cabinet deploy` build the binary) leave out what a cabinet never runs:
// `cabinet demo` and `cabinet simulate`, and with them the simulator's
// fakes and the demo's embedded MQTT broker. The commands keep their names
// and say where they run; demo.go and simulate.go are the real ones.

// checkoutOnly is the synopsis of a command this build leaves out.
func checkoutOnly(synopsis string) string {
	return synopsis + " (from a source checkout only)"
}

type demoCommand struct{ env *env }

func (c *demoCommand) Run(_ context.Context, args []string) error {
	return checkoutCommand(c.env, "demo", args)
}

type simulateCommand struct{ env *env }

func (c *simulateCommand) Run(_ context.Context, args []string) error {
	return checkoutCommand(c.env, "simulate", args)
}

// checkoutCommand says, in one line, that the command runs from a checkout
// of Cabinet's source: on stderr with exit 2, or after -h with exit 0.
func checkoutCommand(e *env, name string, args []string) error {
	msg := fmt.Sprintf("runs from a checkout of Cabinet's source (go run ./cmd/cabinet %s), not from a release build", name)
	if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
		fmt.Fprintf(e.Stderr, "cabinet %s: %s\n", name, msg)
		return errHelp
	}
	return &codedError{msg: msg, code: exitUsage}
}
