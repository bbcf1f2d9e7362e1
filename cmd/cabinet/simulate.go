//go:build !release

package main

import (
	"context"
	"fmt"
	"os"

	"github.com/batocera-cabinet/cabinet/simulator"
)

type simulateCommand struct{ env *env }

func (c *simulateCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "simulate", "", `Run a simulated cabinet on loopback until interrupted: a fake EmulationStation web
API (same JSON and quirks as the real one) over a fixture library, a fake RetroArch
that answers network commands while a libretro game runs, ES events fired at the
hook scripts the way ES fires them, a fake RomM (one of its ROMs also on the
cabinet), and Batocera's own tools as the demo has them (batocera-audio at 70 %,
an update check that publishes a newer Batocera, a game pad at 80 % battery), so
cabinet serve announces the volume, mute, controller and OS update entities.
With --write-config DIR it writes DIR/cabinet.conf, so that
CABINET_CONFIG=DIR/cabinet.conf makes every cabinet command use the simulator.`, &sets)
	games := fs.Int("games", 0, "generate a library of N games over 60 systems (0: the fixture library)")
	dir := fs.String("write-config", "", "write DIR/cabinet.conf and keep the fake tree in DIR")
	hooks := fs.Bool("hooks", false, "install the ES hook scripts into the fake tree, running this binary (needs --write-config)")
	playTime := fs.Duration("play-time", 0, "end every game after this long (0: until quit)")
	withRomM := fs.Bool("romm", true, "also serve a fake RomM (the library tools)")
	withSystem := fs.Bool("system", true, "also install the fake batocera-audio, update check and game pad (the volume, controller and update entities)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *hooks && *dir == "" {
		return fmt.Errorf("%w: --hooks needs --write-config DIR", errUsage)
	}
	cab, err := simulator.Start(simulator.Options{Dir: *dir, Games: *games, PlayTime: *playTime, ScriptStderr: c.env.Stderr, RomM: *withRomM, System: *withSystem})
	if err != nil {
		return err
	}
	defer cab.Close()
	out := c.env.Stdout
	fmt.Fprintf(out, "Simulated cabinet (%d games in %d systems)\n", cab.Library.Len(), len(cab.Library.Systems()))
	fmt.Fprintf(out, "  EmulationStation API  %s   (try: curl %s/systems)\n", cab.ESURL(), cab.ESURL())
	fmt.Fprintf(out, "  RetroArch commands    udp %s   (answers while a libretro game runs)\n", cab.RetroArchAddr())
	if cab.RomM != nil {
		fmt.Fprintf(out, "  %-20s  %s   (token in %s)\n", "RomM "+cab.RomM.Version()+" (fake)", cab.RomMURL(), cab.Path(simulator.RomMTokenFile))
		if g := cab.RomMGamePath(); g != "" {
			fmt.Fprintf(out, "  on the cabinet        %s (a RomM ROM)\n", g)
		}
	}
	fmt.Fprintf(out, "  fake Batocera tree    %s\n", cab.Root)
	if cab.Input != nil {
		fmt.Fprintf(out, "  system tools          %s\n", demoSystemNote(cab))
	}
	if *dir != "" {
		p, err := cab.WriteConfig(*dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  config                %s\n\nUse it:  export CABINET_CONFIG=%s\n         cabinet doctor; cabinet call batocera_find_games query=mario\n", p, p)
		if cab.RomM != nil {
			fmt.Fprintf(out, "         cabinet call library_search query=alpha\n")
		}
		if *hooks {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			if _, err := cab.InstallHooks(exe, p); err != nil {
				return err
			}
			fmt.Fprintf(out, "  hooks                 installed: simulated ES events run %s hook\n", exe)
		}
	}
	fmt.Fprintf(out, "\nLaunch a game: curl -d '%s' %s/launch\nStop with Ctrl-C.\n", firstGamePath(cab), cab.ESURL())
	cab.ES.Start()
	<-ctx.Done()
	fmt.Fprintln(out, "stopping")
	return nil
}

func firstGamePath(cab *simulator.Cabinet) string {
	for _, s := range cab.Library.Systems() {
		if gs := cab.Library.Games(s.Name); len(gs) > 0 {
			return gs[0].Path
		}
	}
	return ""
}
