package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/argv"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/packaging"
)

// entryBudget bounds an entry: ES's menus are frozen while it runs.
const entryBudget = 3 * time.Second

// entryCommand is what ES runs for one of Cabinet's entries (package
// packaging, es_systems_cabinet.cfg): the daemon answers it, and the
// answer goes to ES's notification queue, shown as soon as ES draws its
// menus again (es-app HttpServerThread /notify only queues it). It always
// exits 0: ES turns an exit code of 200-300 into an error box.
type entryCommand struct{ env *env }

func (c *entryCommand) Run(ctx context.Context, args []string) error {
	if len(args) != 1 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(c.env.Stderr, "Usage: cabinet entry FILE\n\nRun by EmulationStation for one of Cabinet's entries (%s): "+
			"asks the daemon and shows its answer on screen.\n", strings.Join(entryNames(), ", "))
		return errHelp
	}
	ctx, cancel := context.WithTimeout(ctx, entryBudget)
	defer cancel()
	l := config.Load(config.Inputs{Environ: c.env.Environ})
	name := strings.TrimSuffix(filepath.Base(argv.UnescapePath(args[0])), packaging.EntryExtension)
	text, err := socket.Entry(ctx, l.Config.Layout().Socket(), name)
	switch {
	case errors.Is(err, socket.ErrNotRunning):
		text = "Cabinet is not running, so nothing was asked: tell a grown-up."
	case err != nil:
		text = "Cabinet could not answer: " + untrusted.Clean(strings.TrimPrefix(err.Error(), "daemon: "), 120)
	}
	esc, cerr := es.New(es.Config{URL: l.Config.ESURL, Timeout: entryBudget})
	if cerr == nil {
		cerr = esc.Notify(ctx, text)
	}
	if cerr != nil {
		fmt.Fprintf(c.env.Stderr, "%s (not shown: %v)\n", text, cerr)
	}
	return nil
}

func entryNames() []string {
	var out []string
	for _, e := range packaging.Entries() {
		out = append(out, e.Name)
	}
	return out
}
