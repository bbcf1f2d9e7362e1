package daemon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realretroarch"
)

// TestHouseholdRealRetroArch holds the household's messages and its save at
// the limit to the real RetroArch 1.14 (skipped unless installed;
// CABINET_REQUIRE_PEERS=1 makes it required), set up as Batocera sets it up
// by default (incremental save states: savestate_auto_index) with two of
// the player's states from earlier evenings in its savestate folder. The
// daemon runs on the rig's fake clock with the fake ES, whose /emukill ends
// the real RetroArch as Batocera's swissknife does; every message and the
// save go to the real RetroArch: the time left and the warning appear on
// its screen (its narrator logs what it shows), and at the limit it has
// written a new slot, after the player's highest and overwriting neither of
// them, by the time the quit ends it.
func TestHouseholdRealRetroArch(t *testing.T) {
	dir := t.TempDir()
	states := filepath.Join(dir, "states") // realretroarch's savestate_directory
	mine := map[string][]byte{"stub.state": []byte("the player's slot 0"), "stub.state3": []byte("the player's slot 3")}
	earlier := time.Now().Add(-26 * time.Hour).Truncate(time.Second)
	if err := os.MkdirAll(states, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range mine {
		p := filepath.Join(states, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, earlier, earlier); err != nil {
			t.Fatal(err)
		}
	}
	in := peertest.RetroArch(t, realretroarch.Options{Dir: dir, Narrate: true,
		Config: map[string]string{"savestate_auto_index": "true"}})
	if in.SavestateDir != states {
		t.Fatalf("real RetroArch saves states in %s, want %s", in.SavestateDir, states)
	}
	r := householdRigWith(t, func(r *rig) {
		r.mu.Lock()
		r.cfg.Tools.RetroArchAddr = in.Addr
		r.mu.Unlock()
	}, "enabled", "1", "minutes.daily", "10", "warn_at", "5")
	limit := r.settings.StateTopic(haentities.LimitState)

	r.play(0)
	// Batocera's swissknife ends the game on ES's /emukill with a SIGTERM to
	// RetroArch: the simulator's game ending (its fake RetroArch unloaded)
	// is that moment, and a save asked for after it comes too late.
	ctx := cabinettest.Context(t)
	go func() {
		if _, err := r.cab.RetroArch.WaitFor(ctx, func(s fakeretroarch.Snapshot) bool { return !s.Loaded }); err == nil {
			in.Stop()
		}
	}()
	cabinettest.Await(t, "the time left on RetroArch's screen", nil, raSpoke(in, "10 minutes of play left today."))

	r.stepUntil("the warning point", 30*time.Second, nil, retainedIs(r, limit, "warning"))
	cabinettest.Await(t, "the warning on RetroArch's screen", nil,
		raSpoke(in, "5 minutes of play left today: the game will be saved and closed."))

	// Nothing comes after the limit: woken by the broker, the wait sees the
	// moment the limit is published.
	r.stepUntil("the limit", 30*time.Second, r.broker.Changed, retainedIs(r, limit, "time_up"))
	upAt := time.Now()
	cabinettest.Await(t, "RetroArch ended through ES's /emukill", nil, func() (bool, string) {
		select {
		case <-in.Done():
			return true, ""
		default:
			_, running := r.cab.ES.Running()
			return false, fmt.Sprintf("ES running a game: %v", running)
		}
	})
	for _, c := range r.cab.ES.Calls() {
		if c.Route == fakees.RouteEmuKill {
			t.Logf("at the limit: saved and quit %v after it", c.At.Sub(upAt).Round(time.Millisecond))
			break
		}
	}

	// A new slot, the one after the player's highest, saved by the time
	// RetroArch was ended; the player's states untouched.
	ents, err := os.ReadDir(states)
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, e := range ents {
		if _, old := mine[e.Name()]; !old {
			added = append(added, e.Name())
		}
	}
	if !slices.Equal(added, []string{"stub.state4"}) {
		t.Fatalf("RetroArch's savestate folder gained %q, want [stub.state4] (the slot after the player's highest)", added)
	}
	if fi, err := os.Stat(filepath.Join(states, "stub.state4")); err != nil || fi.Size() == 0 {
		t.Fatalf("the new state: %v, %v", fi, err)
	}
	for name, data := range mine {
		p := filepath.Join(states, name)
		got, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if err != nil || !bytes.Equal(got, data) || !fi.ModTime().Equal(earlier) {
			t.Errorf("the player's %s changed: %q, modified %v (%v)", name, got, fi.ModTime(), err)
		}
	}
	r.waitLog("ES notified", func() bool { return esNotified(r.cab.ES, "was saved and closed") })
	if n := r.cab.RetroArch.Snapshot().StatesSaved; n != 0 {
		t.Errorf("the simulator's fake RetroArch saved %d states: the daemon did not talk to the real one", n)
	}
}

// stepUntil moves the fake clock on by d at each look until cond holds. A
// decision of the enforcer is published before it acts, so waiting on it
// stops the clock there; what the decision does in real time (RetroArch's
// answers, the save) is then waited for without moving the clock, which
// would bring on the next decision and cut a message short. wake (nil:
// looks at a growing interval only) speeds the looks up, and the clock
// with them.
func (r *rig) stepUntil(what string, d time.Duration, wake func() <-chan struct{}, cond func() (bool, string)) {
	r.t.Helper()
	cabinettest.Await(r.t, what, wake, func() (bool, string) {
		if ok, why := cond(); ok {
			return true, ""
		} else {
			r.clock.Advance(d)
			return false, why
		}
	})
}

// retainedIs says whether topic's retained payload is want.
func retainedIs(r *rig, topic, want string) func() (bool, string) {
	return func() (bool, string) {
		b, _ := r.broker.Retained(topic)
		return string(b) == want, topic + " is " + string(b)
	}
}

// raSpoke says whether the real RetroArch has shown a message containing
// text (its narrator's log).
func raSpoke(in *realretroarch.Instance, text string) func() (bool, string) {
	return func() (bool, string) {
		got := in.Spoken()
		return slices.ContainsFunc(got, func(m string) bool { return strings.Contains(m, text) }),
			"RetroArch showed: " + strings.Join(got, " | ")
	}
}
