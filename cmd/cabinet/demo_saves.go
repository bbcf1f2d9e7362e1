//go:build !release

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// saveDemo is the evening's save sync: Alpha Quest's save leaves for RomM
// after the game; the household's handheld plays it on the bus and its save
// is on the cabinet once the game is selected in ES, before the launch; then
// both play it at once, and the cabinet keeps its own save, RomM's beside
// it, and tells Home Assistant.
type saveDemo struct {
	exe     string
	environ []string
	broker  *mqttbroker.Broker
	problem string // save_problem's topic
	out     io.Writer
	speed   float64
	// shown is the id of the last of RomM's saves showRomM printed (RomM
	// numbers them in order): a step waits for its line before the next
	// one speaks.
	shown *atomic.Int64
}

// demoHandheld is the household's other device in RomM: a muOS handheld
// syncing with grout.
var demoHandheld = fakeromm.Device{Name: "Handheld", Platform: "muos", Client: "grout", SyncEnabled: true}

// demoSaveWait bounds every wait of the save steps: a sync after a game
// waits 2 s for RetroArch's write to settle, one after a selection 2 s for
// the cursor to rest.
const demoSaveWait = 30 * time.Second

func (s saveDemo) steps(cab *simulator.Cabinet) []simulator.Step {
	g, ok := cab.Library.GameByPath(cab.RomMGamePath())
	if !ok {
		return nil
	}
	d := func(sec float64) time.Duration { return time.Duration(sec / s.speed * float64(time.Second)) }
	handheld := cab.RomM.AddDevice(demoHandheld)
	srm := cab.BatterySave(g.System, g.Path)
	var onBus []byte // the handheld's save from the bus
	return []simulator.Step{
		{Say: "RetroArch writes " + g.Name + "'s save as the game closes; the cabinet sends it to RomM", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			return s.awaitInRomM(ctx, cab.RomM, "the cabinet's save in RomM", srm)
		}},
		{Say: "on the handheld, someone plays " + g.Name + " on the bus; its save reaches RomM", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			b, err := os.ReadFile(srm)
			if err != nil {
				return err
			}
			onBus = handheldSave(b, 3)
			return s.upload(ctx, cab.RomM, handheld, g, onBus)
		}, Wait: d(1)},
		{Say: "selecting " + g.Name + " in EmulationStation (the cursor rests on it)", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			if err := cab.ES.SelectGame(g.System, g.ID); err != nil {
				return err
			}
			if err := awaitDemo(ctx, "the handheld's save on the cabinet", func() bool {
				b, err := os.ReadFile(srm)
				return err == nil && bytes.Equal(b, onBus)
			}); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "           the handheld's save is in place before the launch (the cabinet's kept in %s)\n",
				onCabinet(cab, newestBackup(cab, g.System, filepath.Base(srm))))
			return nil
		}, Wait: d(1)},
		{Say: "launching " + g.Name + " for a quick go (RetroArch loads the handheld's save)", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			if err := cab.ES.Launch(g.System, g.ID); err != nil {
				return err
			}
			return cab.WaitRunning(ctx)
		}, Wait: d(2)},
		{Say: "quitting it; RetroArch writes the save, which leaves for RomM", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			if err := simulator.EndGame(ctx, cab); err != nil {
				return err
			}
			return s.awaitInRomM(ctx, cab.RomM, "the cabinet's new save in RomM", srm)
		}},
		{Say: "launching " + g.Name + " again", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			if err := cab.ES.Launch(g.System, g.ID); err != nil {
				return err
			}
			return cab.WaitRunning(ctx)
		}, Wait: d(1)},
		{Say: "meanwhile the handheld, back on the bus, uploads another save of " + g.Name, Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			return s.upload(ctx, cab.RomM, handheld, g, handheldSave(onBus, 5))
		}, Wait: d(1)},
		{Say: "quitting it: the save changed on both sides — a conflict; the cabinet keeps its own", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			mark := len(s.broker.Messages())
			if err := simulator.EndGame(ctx, cab); err != nil {
				return err
			}
			mine, err := os.ReadFile(srm)
			if err != nil {
				return err
			}
			if err := s.awaitEvent(ctx, mark, `"event_type":"conflict"`); err != nil {
				return err
			}
			if b, err := os.ReadFile(srm); err != nil || !bytes.Equal(b, mine) {
				return fmt.Errorf("the conflict changed the cabinet's save (%v)", err)
			}
			return s.showConflict(ctx, cab, g)
		}, Wait: d(2)},
	}
}

// handheldSave is the handheld's save after plays more plays of the game
// whose save was b: the play counter (byte 64, as the simulated RetroArch
// keeps it) moved on, and the handheld's mark at byte 128.
func handheldSave(b []byte, plays byte) []byte {
	out := bytes.Clone(b)
	if len(out) < 160 {
		out = append(out, make([]byte, 160-len(out))...)
	}
	out[64] += plays
	copy(out[128:], "played on the handheld")
	return out
}

// upload is the handheld's grout uploading data as g's autosave; it
// returns once showRomM has printed it.
func (s saveDemo) upload(ctx context.Context, r *fakeromm.Server, device string, g library.Game, data []byte) error {
	id, err := r.AddSave(fakeromm.SaveSpec{ROMID: fakeromm.ROMAlphaQuest, Slot: "autosave", FileName: g.Stem() + ".srm",
		Emulator: "fceumm", Content: data, DeviceID: device})
	if err != nil {
		return err
	}
	return awaitDemo(ctx, "the handheld's save shown", func() bool { return s.printed(id) })
}

// awaitInRomM waits until RomM holds the cabinet's save at path, byte for
// byte, and showRomM has printed it.
func (s saveDemo) awaitInRomM(ctx context.Context, r *fakeromm.Server, what, path string) error {
	want, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return awaitDemo(ctx, what, func() bool {
		for _, sv := range r.Saves(fakeromm.ROMAlphaQuest) {
			if bytes.Equal(sv.Content, want) && s.printed(sv.ID) {
				return true
			}
		}
		return false
	})
}

// printed reports whether showRomM has printed RomM's save id.
func (s saveDemo) printed(id int) bool { return int64(id) <= s.shown.Load() }

// awaitEvent waits until a save_problem event holding want reaches the
// broker after its mark-th message.
func (s saveDemo) awaitEvent(ctx context.Context, mark int, want string) error {
	deadline := time.After(demoSaveWait)
	for {
		ch := s.broker.Changed()
		msgs := s.broker.Messages()
		for _, m := range msgs[min(mark, len(msgs)):] {
			if m.Topic == s.problem && strings.Contains(string(m.Payload), want) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("waited %s for Home Assistant's save_problem event", demoSaveWait)
		case <-ch:
		}
	}
}

// showConflict prints what `cabinet call library_saves` says of the
// conflict, and how to settle it.
func (s saveDemo) showConflict(ctx context.Context, cab *simulator.Cabinet, g library.Game) error {
	args := []string{"call", "library_saves", "system=" + g.System, "game_id=" + g.ID}
	cctx, cancel := context.WithTimeout(ctx, demoSaveWait)
	defer cancel()
	cmd := exec.CommandContext(cctx, s.exe, args...)
	cmd.Env = s.environ
	b, err := cmd.Output()
	var res struct {
		Local []struct {
			Path string `json:"path"`
		} `json:"local"`
		Conflicts []struct {
			Slot     string  `json:"slot"`
			Reason   string  `json:"reason"`
			RomMFrom *string `json:"romm_from_device"`
			RomMCopy string  `json:"romm_copy"`
		} `json:"conflicts"`
	}
	if err != nil || json.Unmarshal(b, &res) != nil || len(res.Conflicts) == 0 {
		return fmt.Errorf("cabinet %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	c := res.Conflicts[0]
	from := "another device"
	if c.RomMFrom != nil {
		from = deviceName(cab.RomM, *c.RomMFrom)
	}
	fmt.Fprintf(s.out, "           cabinet %s says:\n", strings.Join(args, " "))
	fmt.Fprintf(s.out, "             conflict in %s: %s\n", c.Slot, c.Reason)
	if len(res.Local) > 0 {
		fmt.Fprintf(s.out, "             the cabinet's save is kept in place: %s\n", onCabinet(cab, res.Local[0].Path))
	}
	fmt.Fprintf(s.out, "             RomM's, from %s, is kept beside the backups: %s\n", from, onCabinet(cab, c.RomMCopy))
	fmt.Fprintf(s.out, "           to settle it: cabinet call library_resolve_save system=%s game_id=%s slot=%s keep=local (or keep=romm)\n",
		g.System, g.ID, c.Slot)
	return nil
}

// newestBackup is the newest of Cabinet's backups of the save named file.
func newestBackup(cab *simulator.Cabinet, system, file string) string {
	dir := cab.Path("/userdata/saves/.cabinet-backup/" + system)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), file+"."); ok && !strings.HasPrefix(rest, "romm-") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return "(no backup)"
	}
	sort.Strings(names) // the time stamps sort
	return filepath.Join(dir, names[len(names)-1])
}

// onCabinet is a path of the simulated cabinet as the cabinet names it.
func onCabinet(cab *simulator.Cabinet, p string) string {
	if rest, ok := strings.CutPrefix(p, cab.Root); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return p
}

// deviceName is RomM's name for a device.
func deviceName(r *fakeromm.Server, id string) string {
	for _, d := range r.Devices() {
		if d.ID == id && d.Name != "" {
			return d.Name
		}
	}
	if id == "" {
		return "no device"
	}
	return "device " + id
}

// awaitDemo polls cond until it holds, for demoSaveWait at most.
func awaitDemo(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(demoSaveWait)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", demoSaveWait, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
