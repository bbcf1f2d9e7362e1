package esevents

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Batocera's achievements hooks (research: batocera.linux
// package/batocera/emulators/retroarch/retroarch/024-achievementcall.patch and
// package/batocera/core/batocera-configgen/scripts/call_achievements_hooks.sh).
const (
	// AchievementsRuntimeDir and AchievementsUserDir are the two directories
	// call_achievements_hooks.sh walks, in this order.
	AchievementsRuntimeDir = "var/run/emulationstation/scripts/achievements"
	AchievementsUserDir    = "userdata/system/configs/emulationstation/scripts/achievements"
	// AchievementsCaller is where configgen installs the script it points
	// RetroArch's cheevos_cmd at.
	AchievementsCaller = "usr/share/batocera/configgen/call_achievements_hooks.sh"
	// cheevosCmdArgs is the size of the patch's cmdargs buffer: snprintf
	// cuts the command line there.
	cheevosCmdArgs = 256
)

// Achievements is RetroArch with Batocera's cheevos_cmd patch unlocking an achievement: it
// builds the patch's command line — `<cheevos_cmd> <id> "<title>" "<description>" > /dev/null
// 2>/dev/null`, snprintf'd into 256 bytes, the title and description unescaped inside double
// quotes — and runs it with system() (sh -c), waiting for it as RetroArch's loop does. Its
// cheevos_cmd is call_achievements_hooks.sh, installed under Root as configgen installs it:
// every file under the runtime then the user achievements directory (find -L, recursive) is
// run with "$1" "$2" "$3", in the foreground, its stdin the find | while pipe.
type Achievements struct {
	// Root is prepended to the Batocera paths; "" means "/".
	Root string
	// Dir is the working directory (RetroArch's: ES's); default <Root>/userdata.
	Dir string
	// Env is added after the inherited environment and HOME (<Root>/userdata/system).
	Env []string
	// Stderr receives what sh says of a command line it cannot parse (RetroArch's own stderr:
	// the patch sends only the hooks' output to /dev/null). nil discards it.
	Stderr io.Writer
}

// callerScript is call_achievements_hooks.sh with its two directories under root.
func callerScript(root string) string {
	return `#!/bin/sh
for D in ` + shellQuote(filepath.Join(root, AchievementsRuntimeDir)) + ` ` + shellQuote(filepath.Join(root, AchievementsUserDir)) + `
do
    find -L "${D}" -type f | while read X
    do
	"${X}" "${1}" "${2}" "${3}"
    done
done
`
}

// Install writes call_achievements_hooks.sh under Root (done by Unlock too).
func (a *Achievements) Install() (string, error) {
	p := filepath.Join(a.root(), AchievementsCaller)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("install call_achievements_hooks.sh: %w", err)
	}
	if err := os.WriteFile(p, []byte(callerScript(a.root())), 0o755); err != nil {
		return "", fmt.Errorf("install call_achievements_hooks.sh: %w", err)
	}
	return p, nil
}

// CommandLine is the patch's command line for an unlock, cut at 256 bytes as snprintf cuts it.
func (a *Achievements) CommandLine(caller string, id uint32, title, description string) string {
	line := caller + " " + strconv.FormatUint(uint64(id), 10) + ` "` + title + `" "` + description + `" > /dev/null 2>/dev/null`
	if len(line) > cheevosCmdArgs-1 {
		line = line[:cheevosCmdArgs-1]
	}
	return line
}

// Unlock runs the hooks for one achievement and returns when the last has exited. sh's own
// exit status is ignored, as system()'s is; an error is only what keeps sh from running.
func (a *Achievements) Unlock(ctx context.Context, id uint32, title, description string) error {
	caller, err := a.Install()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", a.CommandLine(caller, id, title, description))
	cmd.Dir = a.Dir
	if cmd.Dir == "" {
		cmd.Dir = filepath.Join(a.root(), "userdata")
	}
	cmd.Env = append(append(os.Environ(), "HOME="+filepath.Join(a.root(), "userdata/system")), a.Env...)
	cmd.Stderr = a.Stderr
	if err := cmd.Run(); err != nil {
		if _, exited := err.(*exec.ExitError); exited {
			return nil
		}
		return fmt.Errorf("achievement %d: %w", id, err)
	}
	return nil
}

func (a *Achievements) root() string {
	if a.Root == "" {
		return "/"
	}
	return a.Root
}

// shellQuote quotes s for sh as one word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
