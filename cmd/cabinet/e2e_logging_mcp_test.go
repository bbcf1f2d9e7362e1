package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestMCPCheckLogging: the official TypeScript SDK (protocol 2025-11-25)
// sets a level with logging/setLevel and receives a call's log
// notifications at that level and above, over stdio (`cabinet mcp`) and over
// HTTP (`cabinet serve`). library_install of a ROM RomM does not have logs
// its first phase (info) and its refusal (warning), and nothing at level
// error; an install logs its phases. No line carries the RomM token.
func TestMCPCheckLogging(t *testing.T) {
	t.Parallel()
	cabinettest.Long(t, "the daemon and six runs of the Node SDK client")
	check := cabinettest.NewMCPCheck(t)
	cab, env := installCabinet(t)
	const unknown = 9999 // not in the fake RomM

	// install calls library_install at level and returns the lines, as
	// "level logger: data".
	install := func(t *testing.T, target []string, level string, romID int, fails bool) []string {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"rom_id": romID})
		rep, code, stderr := runMCPCheck(t, check, env, []string{"--log-level", level, "--call", "library_install", "--args", string(args)}, target...)
		if code != 0 || !rep.OK || rep.Call == nil || rep.Call.IsError != fails {
			t.Fatalf("library_install rom_id %d at %s: exit %d, want isError %v: %+v\nstderr: %s", romID, level, code, fails, rep, stderr)
		}
		var lines []string
		for _, l := range rep.Call.Logs {
			line := fmt.Sprintf("%v %v: %v", l["level"], l["logger"], l["data"])
			if strings.Contains(line, strings.TrimPrefix(cab.RomM.Token(), "rmm_")) {
				t.Errorf("a log notification carries the RomM token: %s", line)
			}
			lines = append(lines, line)
		}
		return lines
	}
	reading := fmt.Sprintf("info install: Reading ROM %d from RomM.", unknown)
	refused := fmt.Sprintf("warning install: library_install refused: read ROM %d from RomM: ", unknown)
	phases := []string{
		fmt.Sprintf("info install: Reading ROM %d from RomM.", fakeromm.ROMCosmicCrusade),
		"info install: Downloading Cosmic Crusade (USA).sfc from RomM (file 1 of 1;",
		"info install: Verifying Cosmic Crusade (USA).sfc against RomM's hashes (file 1 of 1).",
		"info install: Moving Cosmic Crusade into place (1 file(s),",
		"info install: Having EmulationStation list Cosmic Crusade with RomM's metadata and cover.",
	}

	t.Run("stdio", func(t *testing.T) {
		target := []string{"--stdio", "--", cabinetBinary(t), "mcp"}
		lines := install(t, target, "info", unknown, true)
		if len(lines) != 2 || lines[0] != reading || !strings.HasPrefix(lines[1], refused) {
			t.Errorf("unknown ROM at info: %q, want %q and %q…", lines, reading, refused)
		}
		if lines := install(t, target, "warning", unknown, true); len(lines) != 1 || !strings.HasPrefix(lines[0], refused) {
			t.Errorf("unknown ROM at warning: %q, want %q…", lines, refused)
		}
		if lines := install(t, target, "error", unknown, true); len(lines) != 0 {
			t.Errorf("unknown ROM at error: %q, want none", lines)
		}
	})
	// Over HTTP mcp-go may drop the last line before the result, and a
	// line may come on the client's GET stream instead of the call's, out
	// of order (logging.go): only the lines with work after them are
	// required there, in any order.
	t.Run("http", func(t *testing.T) {
		url, token, log, stop := startServe(t, env)
		target := []string{"--url", url, "--token", token}
		lines := install(t, target, "info", unknown, true)
		if !slices.Contains(lines, reading) || len(lines) > 2 {
			t.Errorf("unknown ROM at info: %q, want %q (and %q…)", lines, reading, refused)
		}
		if lines := install(t, target, "error", unknown, true); len(lines) != 0 {
			t.Errorf("unknown ROM at error: %q, want none", lines)
		}
		lines = install(t, target, "info", fakeromm.ROMCosmicCrusade, false)
		for _, want := range phases {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
				t.Errorf("install at info: no %q… in %q", want, lines)
			}
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "info install: ") {
				t.Errorf("install at info: %q", l)
			}
		}
		stop()
		if strings.Contains(log.String(), cab.RomM.Token()) {
			t.Errorf("the daemon's log shows the RomM token")
		}
	})
}
