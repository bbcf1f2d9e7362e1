package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
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

// parseVerb parses `cabinet CMD [flags] VERB [flags] [args]`: flags may come
// before or after the verb; allowed names each verb and the flags that go
// with it (--set goes with all). It returns the verb and the flags given;
// fs.Args() is then what follows the verb and its flags.
func parseVerb(fs *flag.FlagSet, args []string, cmd string, allowed map[string][]string, want string) (verb string, set map[string]bool, err error) {
	if err := parseFlags(fs, args); err != nil {
		return "", nil, err
	}
	verb = fs.Arg(0)
	if fs.NArg() > 0 {
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return "", nil, err
		}
	}
	set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	ok, known := allowed[verb]
	if !known {
		return "", nil, fmt.Errorf("%w: want %s", errUsage, want)
	}
	for f := range set {
		if f != "set" && !slices.Contains(ok, f) {
			return "", nil, fmt.Errorf("%w: --%s does not go with `cabinet %s %s`", errUsage, f, cmd, verb)
		}
	}
	return verb, set, nil
}

// loadConfig loads the configuration with the command's --set flags.
func loadConfig(e *env, sets setFlag) *config.Loaded {
	return config.Load(config.Inputs{Environ: e.Environ, Sets: sets})
}
