package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/simulator/faketools"
)

// volumeRig is the tools rig with batocera_set_volume over the simulator's
// fake batocera-audio (a sh script, run for real), at 60 % and not muted.
func volumeRig(t *testing.T, opts Options) (*rig, string) {
	t.Helper()
	root := t.TempDir()
	if err := faketools.InstallAudio(root, 60, false); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigConfig{opts: opts, deps: func(d *Deps) {
		d.Volume = &sysaudio.Audio{Bin: filepath.Join(root, faketools.AudioBin)}
	}})
	return r, root
}

func TestSetVolume(t *testing.T) {
	r, root := volumeRig(t, Options{})
	var v VolumeResult
	r.ok("batocera_set_volume", map[string]any{"level": 35}, &v)
	if v.Outcome != outcomeDone || v.Level != 35 || v.Mute || strings.Join(v.Sent, ",") != "batocera-audio setSystemVolume 35" {
		t.Errorf("level 35: %+v", v)
	}
	r.ok("batocera_set_volume", map[string]any{"mute": true, "level": 35}, &v)
	if v.Outcome != outcomeDone || !v.Mute || v.Level != 35 || strings.Join(v.Sent, ",") != "batocera-audio setSystemVolume mute" ||
		v.Detail != "Set the volume to 35 %, muted." {
		t.Errorf("mute: %+v", v)
	}
	if level, muted, err := faketools.ReadAudio(root); err != nil || level != 35 || !muted {
		t.Errorf("batocera-audio holds %d %v (%v)", level, muted, err)
	}
	r.ok("batocera_set_volume", map[string]any{"mute": true}, &v)
	if v.Outcome != outcomeUnchanged || len(v.Sent) != 0 {
		t.Errorf("unchanged: %+v", v)
	}
	for _, args := range []map[string]any{{}, {"level": 101}, {"level": -1}, {"level": "loud"}, {"mute": "yes"}} {
		if msg := r.refused("batocera_set_volume", args); msg == "" {
			t.Errorf("%v: refused without a reason", args)
		}
	}
	if level, _, _ := faketools.ReadAudio(root); level != 35 {
		t.Errorf("a refused call changed the volume to %d", level)
	}
	// The sound server down: a clear refusal.
	if err := faketools.StopAudioServer(root); err != nil {
		t.Fatal(err)
	}
	if msg := r.refused("batocera_set_volume", map[string]any{"level": 50}); !strings.Contains(msg, "sound server is not running") {
		t.Errorf("sound server down: %q", msg)
	}
}

func TestSetVolumeDryRun(t *testing.T) {
	r, root := volumeRig(t, Options{DryRun: true})
	var v VolumeResult
	r.ok("batocera_set_volume", map[string]any{"level": 20, "mute": true}, &v)
	if v.Outcome != outcomeDryRun || v.Level != 60 || v.Mute || len(v.Sent) != 2 {
		t.Errorf("dry run: %+v", v)
	}
	if level, muted, _ := faketools.ReadAudio(root); level != 60 || muted {
		t.Errorf("a dry run changed the volume: %d %v", level, muted)
	}
}
