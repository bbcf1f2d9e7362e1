package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
)

// errHelp is returned after -h printed the usage (exit 0).
var errHelp = errors.New("help shown")

// setFlag collects repeated --set key=value.
type setFlag []string

func (s *setFlag) String() string { return strings.Join(*s, " ") }
func (s *setFlag) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("want key=value, such as cabinet.mqtt.broker=tcp://ha.lan:1883")
	}
	*s = append(*s, v)
	return nil
}

// newFlags builds a command's FlagSet with the shared --set flag and a usage
// text.
func newFlags(e *env, name, args, doc string, sets *setFlag) *flag.FlagSet {
	fs := flag.NewFlagSet("cabinet "+name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Var(sets, "set", "override one setting: key=value (repeatable)")
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "Usage: cabinet %s [flags] %s\n\n%s\n\nFlags:\n", name, args, doc)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses and maps -h to errHelp and bad flags to errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// loadConfig loads the configuration with the command's --set flags.
func loadConfig(e *env, sets setFlag) *config.Loaded {
	return config.Load(config.Inputs{Environ: e.Environ, Sets: sets})
}
