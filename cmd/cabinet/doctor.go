package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon/doctor"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/packaging"
)

type doctorCommand struct{ env *env }

func (c *doctorCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "doctor", "", `Check each layer — configuration, state dir, EmulationStation, the library, the
running game, RetroArch network commands, the MQTT broker, the hook scripts — and say
for every failure what it means and what to do. Changes nothing. Exits 1 when
something is broken.`, &sets)
	asJSON := fs.Bool("json", false, "print JSON")
	verbose := fs.Bool("verbose", false, "show details of every check")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	env, err := doctorEnv(l)
	if err != nil {
		return err
	}
	rep := doctor.Run(ctx, doctor.Checks(env), 5*time.Second)
	if *asJSON {
		if err := rep.WriteJSON(c.env.Stdout); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.env.Stdout, "cabinet %s (commit %s)\n", buildVersion(), buildCommit())
		rep.Write(c.env.Stdout, *verbose)
	}
	if !rep.OK {
		return &codedError{code: exitError}
	}
	return nil
}

// doctorEnv builds the checks' dependencies from the configuration.
func doctorEnv(l *config.Loaded) (doctor.Env, error) {
	cfg := &l.Config
	esc, err := es.New(es.Config{URL: cfg.ESURL, Timeout: 3 * time.Second})
	if err != nil {
		return doctor.Env{}, err
	}
	env := doctor.Env{
		Loaded:    l,
		ES:        esc,
		RetroArch: retroarch.New(cfg.RetroArchAddr, retroarch.WithTimeout(time.Second)),
		Hooks:     rootedLayout(cfg),
	}
	if cfg.MQTTEnabled() {
		id, _ := cfg.CabinetID()
		if id == "" {
			id = "new"
		}
		opts := mqttlink.Options{
			Broker: cfg.MQTT.Broker, Username: cfg.MQTT.Username, Password: cfg.MQTT.Password.Reveal(),
			ClientID: fmt.Sprintf("cabinet_%s_doctor%d", id, os.Getpid()), CAFile: cfg.Path(cfg.MQTT.CAFile),
		}
		env.MQTTConnect = func(ctx context.Context) error {
			conn, err := mqttlink.Dial(ctx, opts)
			if err != nil {
				return err
			}
			conn.Close(ctx)
			return nil
		}
	}
	return env, nil
}

// rootedLayout is where the hook scripts live on this cabinet (under
// cabinet.paths.root in tests and the simulator).
func rootedLayout(cfg *config.Config) packaging.Layout {
	l := packaging.DefaultLayout()
	l.ESScripts = cfg.Path(l.ESScripts)
	l.UserScripts = cfg.Path(l.UserScripts)
	l.RunDir = cfg.RunDir()
	if exe, err := os.Executable(); err == nil && cfg.Root != "" {
		// Under a fake tree (simulator, tests) the scripts call this binary.
		l.Binary = exe
	}
	return l
}
