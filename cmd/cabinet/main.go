// Command cabinet is Cabinet's one binary: the EmulationStation event hook,
// the resident daemon, the MCP server and their tools. main is a
// switchboard: it picks the subcommand, and each subcommand parses its flags,
// loads the configuration, builds its dependencies and runs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()})
	stop()
	os.Exit(code)
}

// env is what a command may touch of the process, passed in so commands run
// in tests without a real process.
type env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Environ        []string
}

// command is one subcommand.
type command interface {
	Run(ctx context.Context, args []string) error
}

type commandSpec struct {
	name, synopsis string
	make           func(e *env) command
}

func commands() []commandSpec {
	return []commandSpec{
		{"serve", "run the resident daemon (Batocera service)", func(e *env) command { return &serveCommand{env: e} }},
		{"hook", "record an EmulationStation or configgen event (run by ES scripts)", func(e *env) command { return &hookCommand{env: e} }},
		{"entry", "answer one of Cabinet's entries in EmulationStation (run by ES)", func(e *env) command { return &entryCommand{env: e} }},
		{"mcp", "serve MCP over stdio", func(e *env) command { return &mcpCommand{env: e} }},
		{"call", "call one MCP tool and print its JSON result", func(e *env) command { return &callCommand{env: e} }},
		{"doctor", "check every layer and say what to fix", func(e *env) command { return &doctorCommand{env: e} }},
		{"simulate", checkoutOnly("run a simulated cabinet (ES, RetroArch) on loopback"), func(e *env) command { return &simulateCommand{env: e} }},
		{"demo", checkoutOnly("simulator + broker + daemon on loopback, with a scripted evening"), func(e *env) command { return &demoCommand{env: e} }},
		{"install", "install or upgrade Cabinet on this cabinet (as root)", func(e *env) command { return &installCommand{env: e} }},
		{"uninstall", "remove Cabinet from this cabinet (--purge: its history and settings too)", func(e *env) command { return &uninstallCommand{env: e} }},
		{"deploy", "install or upgrade Cabinet on a cabinet over SSH (run on a computer)", func(e *env) command { return &deployCommand{env: e} }},
		{"token", "create or show the LAN MCP bearer token", func(e *env) command { return &tokenCommand{env: e} }},
		{"clients", "list or sign out the MCP clients signed in by OAuth", func(e *env) command { return &clientsCommand{env: e} }},
		{"romm", "pair with RomM (pair [--code]), show the pairing (status) or forget it (unpair)", func(e *env) command { return &rommCommand{env: e} }},
		{"config", "print the effective configuration and where each value came from", func(e *env) command { return &configCommand{env: e} }},
		{"version", "print version, commit, Go version and platform", func(e *env) command { return &versionCommand{env: e} }},
	}
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// errUsage marks an error whose message is usage advice (exit 2).
var errUsage = errors.New("usage")

// exitCoder lets a command choose its exit code (doctor, call).
type exitCoder interface{ ExitCode() int }

func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.Stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.make(e).Run(ctx, args[1:])
		var ec exitCoder
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, errHelp):
			return exitOK
		case errors.As(err, &ec):
			if msg := err.Error(); msg != "" {
				fmt.Fprintf(e.Stderr, "cabinet %s: %s\n", c.name, msg)
			}
			return ec.ExitCode()
		case errors.Is(err, errUsage):
			fmt.Fprintf(e.Stderr, "cabinet %s: %s\n", c.name, err)
			return exitUsage
		default:
			fmt.Fprintf(e.Stderr, "cabinet %s: %s\n", c.name, err)
			return exitError
		}
	}
	fmt.Fprintf(e.Stderr, "cabinet: unknown command %q\n\n", args[0])
	usage(e.Stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Cabinet makes a Batocera cabinet part of the home: play tracking for Home Assistant (MQTT)")
	fmt.Fprintln(w, "and an MCP server for AI assistants.")
	fmt.Fprintln(w, "\nUsage: cabinet <command> [flags] [args]")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.synopsis)
	}
	fmt.Fprintln(w, "\nRun 'cabinet <command> -h' for a command's flags. Every command accepts --set key=value")
	fmt.Fprintln(w, "to override one cabinet.* setting (see 'cabinet config').")
}
