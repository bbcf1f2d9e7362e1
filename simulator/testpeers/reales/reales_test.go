package reales

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// recordTB keeps what Stop reports instead of failing the test, so the
// stub check itself can be checked.
type recordTB struct {
	testing.TB
	errs []string
}

func (r *recordTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestRealES holds the helper to the facts the e2e tests build on, read in
// upstream's source: ES's hook lines (Scripting.cpp executeScript: a game
// whose stem sh cannot parse gets no game-start hook; a path with spaces
// arrives escaped and quoted; game-end has no arguments; root scripts get
// the event first), the launcher's configgen calls with a true argv, GET
// /quit firing a plain quit, and GET /emukill running
// batocera-es-swissknife (ApiSystem::emuKill) — the stub records it and
// Stop fails the test for it.
func TestRealES(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real EmulationStation: runs without -short")
	}
	dir, err := os.MkdirTemp("", "reales-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rec := &recordTB{TB: t}
	e := New(rec, Options{Dir: dir})
	events := filepath.Join(dir, "events.log")
	record := fmt.Sprintf("#!/bin/sh\nprintf '%%s|%%s\\n' \"$0\" \"$*\" >>%s\n", shQuote(events))
	for _, p := range []string{
		filepath.Join(e.Scripts, "game-start", "rec"),
		filepath.Join(e.Scripts, "game-end", "rec"),
		filepath.Join(e.Scripts, "rec.sh"),
		filepath.Join(e.UserScripts, "rec"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(record), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.Start()
	for _, rom := range []string{ROMPlain, ROMMario, ROMSpaces} {
		e.Launch(e.ROM(SystemNES, rom))
		e.EndGame()
	}
	waitLines(t, events, func(s string) bool { return strings.Count(s, "/game-end/rec|") == 3 })
	got := readLines(t, events)
	plain, mario, spaces := e.ROM(SystemNES, ROMPlain), e.ROM(SystemNES, ROMMario), e.ROM(SystemNES, ROMSpaces)
	escaped := strings.NewReplacer(" ", `\ `, "(", `\(`, ")", `\)`).Replace(spaces)
	for _, want := range []string{
		"game-start/rec|" + plain + " Tetris Tetris",
		"rec.sh|game-start " + plain + " Tetris Tetris",
		"game-start/rec|" + escaped + " Super Mario Bros. (World) Super Mario Bros. (World)",
		"game-end/rec|",
		"rec.sh|game-end",
		"rec|gameStart nes libretro nestopia " + mario,
		"rec|gameStop nes libretro nestopia " + mario,
		"rec|gameStart nes libretro nestopia " + spaces,
	} {
		if !hasSuffixLine(got, want) {
			t.Errorf("no hook line ending in %q; got:\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, l := range got {
		if strings.Contains(l, "game-start") && strings.Contains(l, "Mario_") {
			t.Errorf("ES ran a game-start hook for %s, whose hook line should be a sh syntax error: %q", ROMMario, l)
		}
	}

	resp, err := client.Get(URL + "/emukill")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	e.Quit()
	waitLines(t, events, func(s string) bool { return strings.Contains(s, "rec.sh|quit\n") })
	e.Stop()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "batocera-es-swissknife --emukill") {
		t.Errorf("Stop reported %q, want the one swissknife run of GET /emukill", rec.errs)
	}
	if c, err := client.Get(URL + "/caps"); err == nil {
		c.Body.Close()
		t.Errorf("%s still answers after Stop", URL)
	}
}

func readLines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func hasSuffixLine(lines []string, suffix string) bool {
	for _, l := range lines {
		if strings.HasSuffix(l, suffix) {
			return true
		}
	}
	return false
}

// waitLines waits until the file's text satisfies ok (the hooks run
// detached from ES: nothing signals them).
func waitLines(t *testing.T, p string, ok func(string) bool) {
	t.Helper()
	cabinettest.Await(t, "lines in "+p, nil, func() (bool, string) {
		b, _ := os.ReadFile(p)
		return ok(string(b)), "it holds:\n" + string(b)
	})
}
