package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestDoctorRomMEndToEnd runs `cabinet doctor` against the simulator with
// cabinet.romm.* pointing at a fake RomM over HTTP, as configured (token
// in cabinet.romm.token_file): its exit status and its romm lines for a
// RomM that works, a token without scopes, a wrong token, a development
// build, a RomM that is down and none configured; the token never shows.
func TestDoctorRomMEndToEnd(t *testing.T) {
	t.Parallel()
	cab, err := simulator.Start(simulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cab.Close() })
	serve := func(opts fakeromm.Options) string {
		s, err := fakeromm.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	good := serve(fakeromm.Options{})
	platformsOnly := serve(fakeromm.Options{Scopes: []string{fakeromm.ScopePlatformsRead}})
	dev := serve(fakeromm.Options{Version: fakeromm.VersionDevelopment})
	down := "http://" + cabinettest.ClosedAddr(t, "tcp")
	const wrongToken = "rmm_ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

	tests := []struct {
		name, url, token string
		code             int
		lines            []string // each the start of a line of the output
	}{
		{"works", good, fakeromm.DefaultToken, 0, []string{
			"OK   romm       RomM 5.3.1 answers at " + good,
			"OK   romm-auth  the token works with roms.read, platforms.read, collections.read",
			// The fixture's psx and gb have no games on the simulated cabinet; iOS has no Batocera system.
			"WARN romm-map   4 of 7 RomM platforms map to systems ES lists; 2 to systems this cabinet has no games for (Game Boy (gb), PlayStation (psx)); 1 to no Batocera folder: iOS (ios)",
			"                -> the library tools cannot say whether their games are on the cabinet; if Batocera has a system for one, map it with cabinet.romm.platform_map=",
			"SKIP romarr     cabinet.romarr.url is not set",
			"All checks passed.",
		}},
		{"token without the read scopes", platformsOnly, fakeromm.DefaultToken, 1, []string{
			"OK   romm       RomM 5.3.1",
			"FAIL romm-auth  the token works with platforms.read but lacks roms.read, collections.read",
			"                -> the tools that need roms.read, collections.read fail meanwhile: create a client token in RomM (Profile → Client tokens) with roms.read, platforms.read and collections.read",
			"WARN romm-map   4 of 7",
		}},
		{"wrong token", good, wrongToken, 1, []string{
			"FAIL romm-auth  RomM refused the token for every read (roms.read, platforms.read, collections.read)",
			"                -> create a client token in RomM",
			"SKIP romm-map   the token cannot read RomM's platforms (see romm-auth)",
		}},
		{"development build", dev, fakeromm.DefaultToken, 0, []string{
			"WARN romm       RomM development answers at " + dev + " (a development build; the cabinet is checked against RomM 4.8 to 5.3)",
			"OK   romm-auth  the token works",
		}},
		{"down", down, fakeromm.DefaultToken, 1, []string{
			"FAIL romm       cannot reach RomM at " + down,
			"                -> check cabinet.romm.url (" + down + ")",
			"SKIP romm-auth  RomM is not reachable",
			"SKIP romm-map   RomM is not reachable",
		}},
		{"not configured", "", "", 0, []string{
			"SKIP romm       cabinet.romm.url is not set (optional: the library tools need it)",
			"SKIP romarr     cabinet.romarr.url is not set",
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var extra []string
			if tt.url != "" {
				file := "/userdata/system/cabinet/secrets/romm-" + string(rune('a'+i)) + ".token"
				if err := os.MkdirAll(filepath.Dir(cab.Path(file)), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cab.Path(file), []byte(tt.token+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				extra = []string{"cabinet.romm.url=" + tt.url, "cabinet.romm.token_file=" + file}
			}
			conf, err := cab.WriteConfig(t.TempDir(), extra...)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runBinary(t, configEnv(conf), "doctor", "--verbose")
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			for _, want := range tt.lines {
				if !lineStarting(stdout, want) {
					t.Errorf("no line starting %q in:\n%s", want, stdout)
				}
			}
			for _, secret := range []string{fakeromm.DefaultToken, wrongToken} {
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("doctor shows a RomM token:\n%s", stdout)
				}
			}
			if tt.url == "" && strings.Contains(stdout, "romm-auth") {
				t.Errorf("RomM not configured, yet its token was checked:\n%s", stdout)
			}
		})
	}
}

// lineStarting reports whether a line of text starts with prefix.
func lineStarting(text, prefix string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}
