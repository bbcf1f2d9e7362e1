// Package faketools fakes Batocera's own tools that Cabinet runs:
// batocera-audio and the update check, installable in a
// simulator/testpeers/batocera Tree or in any root directory (cabinet demo
// and cabinet simulate use a plain root, and this package links no testing
// code): POSIX
// sh scripts, run under dash as well as bash, that take the real ones'
// arguments and print what they print, keeping their state in a file of
// the root so that a test, or a person at the demo's shell, can change
// the volume "on the cabinet" by running the script itself.
package faketools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Where the fakes live under the root: as on Batocera for the tools, in
// the tmpfs /var/run for their state.
const (
	AudioBin     = "usr/bin/batocera-audio"
	UpgradeBin   = "usr/bin/batocera-upgrade"
	ConfigBin    = "usr/bin/batocera-config"
	audioState   = "var/run/fake-batocera-audio"
	updateState  = "var/run/fake-batocera-update"
	versionFile  = "usr/share/batocera/batocera.version"
	fakeMaxLevel = 100 // batocera-audio's MAX_VOLUME without audio.volume.boost
)

// InstallAudio installs the fake batocera-audio in root with the given
// state. Its commands are those of Batocera's
// (package/batocera/core/batocera-audio/alsa/batocera-audio):
// getSystemVolume prints the level, getSystemMute "yes" or "no",
// setSystemVolume takes mute, unmute, mute-toggle, N or ±N (0 to 100,
// else "invalid volume value" and exit 1), and anything else prints the
// usage and exits 0. See StopAudioServer for PipeWire being down.
func InstallAudio(root string, level int, muted bool) error {
	if err := installScript(root, AudioBin, fakeAudio); err != nil {
		return err
	}
	return SetAudio(root, level, muted)
}

// SetAudio sets the fake batocera-audio's state in root, as a change
// made on the cabinet would (and starts its PipeWire again).
func SetAudio(root string, level int, muted bool) error {
	if level < 0 || level > fakeMaxLevel {
		return fmt.Errorf("set the fake audio level to %d: the level must be 0 to %d", level, fakeMaxLevel)
	}
	word := "no"
	if muted {
		word = "yes"
	}
	return writeState(root, audioState, fmt.Sprintf("%d %s\n", level, word))
}

// ReadAudio is the fake batocera-audio's state in root.
func ReadAudio(root string) (level int, muted bool, err error) {
	b, err := os.ReadFile(filepath.Join(root, audioState))
	if err != nil {
		return 0, false, fmt.Errorf("read the fake audio state: %w", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 || !strings.HasSuffix(string(b), "\n") {
		return 0, false, fmt.Errorf("fake audio state %q: want \"<level> <yes|no>\\n\"", b)
	}
	level, err = strconv.Atoi(fields[0])
	if err != nil || level < 0 || level > fakeMaxLevel {
		return 0, false, fmt.Errorf("fake audio state %q: bad level", b)
	}
	switch fields[1] {
	case "yes":
		return level, true, nil
	case "no":
		return level, false, nil
	}
	return 0, false, fmt.Errorf("fake audio state %q: mute is neither yes nor no", b)
}

// StopAudioServer makes the fake batocera-audio in root behave as the
// real one does with PipeWire down: the getters print nothing and exit
// 0, the setters fail, pactl's complaint goes to stderr. SetAudio starts
// it again.
func StopAudioServer(root string) error {
	err := os.Remove(filepath.Join(root, audioState))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stop the fake audio server: %w", err)
	}
	return nil
}

// InstallUpdateCheck installs in root a fake batocera-upgrade that
// answers --check-upgrade as Batocera's does when run by ES (stdout not
// a terminal): it prints the published version and exits 0 when it
// differs from root's batocera.version, 12 when not. latest "" publishes
// the installed version. fail is the server out of reach, where the real
// script prints an empty line and exits 0 (its wget failure is lost in
// "local available=$(...)"). Every other action prints the help and
// exits 1. It creates root's batocera.version (Version) if missing.
// Calling it again changes the answer.
func InstallUpdateCheck(root string, latest string, fail bool) error {
	return installUpdate(root, UpgradeBin, fakeUpgrade, latest, fail)
}

// InstallLegacyUpdateCheck installs in root a fake batocera-config whose
// canupdate answers as the one ES ran before June 2026: the same output
// and exits 0 and 12, but exit 2 with "Unable to access the url" on
// stderr when fail. Other commands exit 10, no command prints the usage
// and exits 1.
func InstallLegacyUpdateCheck(root string, latest string, fail bool) error {
	return installUpdate(root, ConfigBin, fakeConfig, latest, fail)
}

func installUpdate(root, bin, script, latest string, fail bool) error {
	if strings.ContainsAny(latest, "\n\r") {
		return fmt.Errorf("fake update check: latest version %q must be one line", latest)
	}
	if err := installScript(root, bin, script); err != nil {
		return err
	}
	vf := filepath.Join(root, versionFile)
	if _, err := os.Stat(vf); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(vf), 0o755); err != nil {
			return fmt.Errorf("fake update check: %w", err)
		}
		if err := os.WriteFile(vf, []byte(defaultVersion+"\n"), 0o644); err != nil {
			return fmt.Errorf("fake update check: %w", err)
		}
	}
	mode := "online"
	if fail {
		mode = "offline"
	}
	return writeState(root, updateState, mode+"\n"+latest+"\n")
}

// defaultVersion is the batocera.version written when the root has none
// (simulator/testpeers/batocera's tree's).
const defaultVersion = "43 2026/05/14 10:00"

// shellSafe refuses a root the scripts could not use unquoted.
func shellSafe(root string) error {
	if !filepath.IsAbs(root) {
		return fmt.Errorf("fake tools root %q must be an absolute path", root)
	}
	for _, r := range root {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._+-", r)) {
			return fmt.Errorf("fake tools root %q must be a path of letters, digits and ./_+- only (the scripts use it unquoted): set TMPDIR to such a path", root)
		}
	}
	return nil
}

// installScript writes script, with @ROOT@ replaced by root, to rel in
// root, executable.
func installScript(root, rel, script string) error {
	if err := shellSafe(root); err != nil {
		return err
	}
	for _, d := range []string{filepath.Dir(rel), filepath.Dir(audioState)} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return fmt.Errorf("install fake %s: %w", filepath.Base(rel), err)
		}
	}
	p := filepath.Join(root, rel)
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(script, "@ROOT@", root)), 0o755); err != nil {
		return fmt.Errorf("install fake %s: %w", filepath.Base(rel), err)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		return fmt.Errorf("install fake %s: %w", filepath.Base(rel), err)
	}
	return nil
}

// writeState replaces the state file rel in root whole, so that a script
// reading it at the same time sees the old state or the new one.
func writeState(root, rel, data string) error {
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("write fake state: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return fmt.Errorf("write fake state: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("write fake state: %w", err)
	}
	return nil
}

// fakeAudio is the fake batocera-audio. Its state file holds
// "<level> <yes|no>"; no file is PipeWire down. It writes the state with
// a rename, as SetAudio does. Numbers are checked as text before any
// arithmetic: dash reads "08" as octal.
const fakeAudio = `#!/bin/sh
# Fake batocera-audio from Cabinet's simulator (simulator/faketools).
STATE='@ROOT@/var/run/fake-batocera-audio'
MAX_VOLUME=100

do_usage() {
    echo "$1 list"
    echo "$1 get"
    echo "$1 set {auto|<device>}"
    echo "$1 list-profiles"
    echo "$1 get-profile"
    echo "$1 set-profile {auto|<profile>}"
    echo "$1 getSystemVolume"
    echo "$1 setSystemVolume {mute|unmute|mute-toggle|[+-]<0...100>}"
    echo "$1 getSystemMute"
    echo "$1 test"
}

refused() {
    echo "Connection failure: Connection refused" >&2
}

save() {
    printf '%s %s\n' "$1" "$2" > "$STATE.$$" && mv -f "$STATE.$$" "$STATE"
}

# digits prints $1 without its leading zeros if it is all digits, at most
# three of them once the zeros are gone; else it fails.
digits() {
    case "$1" in
        ''|*[!0-9]*) return 1 ;;
    esac
    d=$1
    while :; do
        case "$d" in
            0?*) d=${d#0} ;;
            *) break ;;
        esac
    done
    test ${#d} -le 3 || return 1
    echo "$d"
}

LEVEL=
MUTED=
if test -r "$STATE"; then
    read -r LEVEL MUTED < "$STATE"
else
    # what the real script's opening pactl calls say with PipeWire down
    refused
fi

case "$1" in
    list)
        printf 'auto\tauto\n'
        test -n "$LEVEL" && printf 'alsa_output.fake.analog-stereo\tFake Analog Stereo\n'
        ;;
    get|get-profile)
        echo auto
        ;;
    list-profiles)
        printf 'auto\tauto\n'
        ;;
    set|set-profile|test)
        test -n "$LEVEL" || exit 1
        ;;
    getSystemVolume)
        echo "$LEVEL"
        ;;
    getSystemMute)
        if test -n "$LEVEL"; then
            echo "$MUTED"
        else
            refused
        fi
        ;;
    setSystemVolume)
        VOLUME=$2
        case "$VOLUME" in
            mute|unmute|mute-toggle)
                test -n "$LEVEL" || { refused; exit 1; }
                case "$VOLUME" in
                    mute) M=yes ;;
                    unmute) M=no ;;
                    *) if test "$MUTED" = yes; then M=no; else M=yes; fi ;;
                esac
                save "$LEVEL" "$M" || exit 1
                ;;
            [+-]*)
                if N=$(digits "${VOLUME#?}"); then
                    test -n "$LEVEL" || { refused; exit 1; }
                    case "$VOLUME" in
                        +*) NEW=$((LEVEL + N)) ;;
                        *) NEW=$((LEVEL - N)) ;;
                    esac
                    test "$NEW" -lt 0 && NEW=0
                    test "$NEW" -gt "$MAX_VOLUME" && NEW=$MAX_VOLUME
                    save "$NEW" "$MUTED" || exit 1
                    exit 0
                fi
                echo "invalid volume value" >&2
                exit 1
                ;;
            *)
                if N=$(digits "$VOLUME") && test "$N" -le "$MAX_VOLUME"; then
                    test -n "$LEVEL" || { refused; exit 1; }
                    save "$N" "$MUTED" || exit 1
                    exit 0
                fi
                echo "invalid volume value" >&2
                exit 1
                ;;
        esac
        ;;
    *)
        do_usage "$(basename "$0")"
        ;;
esac
`

// fakeUpgrade is the fake batocera-upgrade: its check as run by ES (the
// real one's non-terminal path, do_upgradecheck_0), nothing else. Its
// state file holds "online" or "offline", then the published version
// ("" for the installed one).
const fakeUpgrade = `#!/bin/sh
# Fake batocera-upgrade from Cabinet's simulator (simulator/faketools).
STATE='@ROOT@/var/run/fake-batocera-update'
VERSION_FILE='@ROOT@/usr/share/batocera/batocera.version'

do_help() {
    echo "Usage of $(basename "$0"):"
    echo
    echo "  --check-upgrade [type]   Checks for update on CLI and GUI"
    echo "  (the fake knows nothing else)"
}

case "$1" in
    --check-upgrade)
        MODE=offline
        LATEST=
        CURRENT=
        test -r "$STATE" && { read -r MODE; IFS= read -r LATEST; } < "$STATE"
        test -r "$VERSION_FILE" && IFS= read -r CURRENT < "$VERSION_FILE"
        if test "$MODE" != online; then
            # wget fails, but "local available=$(wget ...)" hides it
            LATEST=
        elif test -z "$LATEST"; then
            LATEST=$CURRENT
        fi
        if test ${#LATEST} -ge 49; then
            echo "Unable to retrieve the version" >&2
            exit 2
        fi
        echo "$LATEST"
        test "$LATEST" != "$CURRENT" && exit 0
        exit 12
        ;;
    --help|-h)
        do_help
        exit 0
        ;;
    *)
        do_help
        exit 1
        ;;
esac
`

// fakeConfig is the fake batocera-config: canupdate as ES ran it before
// June 2026, nothing else. Same state file as fakeUpgrade.
const fakeConfig = `#!/bin/sh
# Fake batocera-config from Cabinet's simulator (simulator/faketools).
STATE='@ROOT@/var/run/fake-batocera-update'
VERSION_FILE='@ROOT@/usr/share/batocera/batocera.version'

if test -z "$1"; then
    printf "usage : batocera-config [command] [args]\nWith command in\n\tcanupdate\n"
    exit 1
fi

if test "$1" = canupdate; then
    MODE=offline
    LATEST=
    INSTALLED=
    test -r "$STATE" && { read -r MODE; IFS= read -r LATEST; } < "$STATE"
    test -r "$VERSION_FILE" && IFS= read -r INSTALLED < "$VERSION_FILE"
    if test "$MODE" != online; then
        echo "Unable to access the url" >&2
        exit 2
    fi
    test -n "$LATEST" || LATEST=$INSTALLED
    echo "$LATEST"
    test "$LATEST" != "$INSTALLED" && exit 0
    exit 12
fi

exit 10
`
