package tracker

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// FuzzDecode: any bytes either decode to a state that encodes back to the same state, or give a clear
// error; never a panic.
func FuzzDecode(f *testing.F) {
	st, _ := Apply(New(), DefaultConfig(), stampAt(400),
		esEvent(KindStart, 0), esGameStart(10, smbPath, smbName), esEvent(KindGameEnd, 399))
	good, _ := Encode(st)
	f.Add(good)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":1,"win":[{"k":"start","at":"2026-01-02T20:00:00+01:00","src":"es"}],"boots":["a"]}`))
	f.Add([]byte(`{"v":1,"core":{"open":{"id":"x","st":{"at":"2026-01-02T20:00:00Z"}}}}`))
	f.Add([]byte(`{"v":1,"sent":[{"t":"start","at":{"at":"0001-01-01T00:00:00Z"}}]}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Decode(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "decode tracker state") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		enc, err := Encode(st)
		if err != nil {
			t.Fatalf("a decoded state does not encode: %v", err)
		}
		st2, err := Decode(enc)
		if err != nil {
			t.Fatalf("an encoded state does not decode: %v\n%s", err, enc)
		}
		enc2, _ := Encode(st2)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", enc, enc2)
		}
		// Whatever was decoded, the tracker must run on it.
		checkApply(t, st2, DefaultConfig(), stampAt(1000), []Event{esEvent(KindStart, 1000)})
	})
}

// FuzzApply: arbitrary event sequences (kinds, sources, times jumping back and forth, boots, hostile
// strings) never panic and keep the invariants.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 0, 10, 1, 0, 20, 2, 1, 5, 3, 0, 200, 4, 0, 1}, "Super Mario Bros.", "random video", int64(60))
	f.Add([]byte{6, 0, 0, 7, 0, 1, 8, 0, 1, 1, 0, 3, 9, 0, 255, 10, 0, 1}, "\u202eevil\x00\xff", "reboot", int64(0))
	f.Add([]byte{1, 1, 0, 1, 0, 0, 1, 2, 1, 2, 0, 90, 2, 1, 0, 12, 0, 7}, "", "suspend", int64(-5))
	f.Fuzz(func(t *testing.T, data []byte, name, arg string, minSec int64) {
		kinds := []Kind{KindStart, KindGameStart, KindGameEnd, KindGameSelected, KindSystemSelected, KindScreensaverStart,
			KindScreensaverStop, KindSleep, KindWake, KindQuit, KindReboot, KindShutdown, KindStopped, "bogus"}
		sources := []Source{SourceES, SourceConfiggen, SourceWatcher, SourceMCP, SourceHA, ""}
		cfg := DefaultConfig()
		cfg.MinSession = time.Duration(minSec%600) * time.Second
		cfg.IgnoreScreensaverLaunches = minSec%2 == 0
		var evs []Event
		sec := 0.0
		for i := 0; i+2 < len(data) && len(evs) < 200; i += 3 {
			k, s, dt := data[i], data[i+1], data[i+2]
			sec += float64(int8(dt)) / 4 // times jump back and forth
			ev := at(kinds[int(k)%len(kinds)], 1000+sec, sources[int(s)%len(sources)])
			if s&0x40 != 0 {
				ev = inBoot(ev)
			}
			if s&0x80 != 0 {
				ev.BootID = ""
			}
			gm := testGames[int(k>>4)%len(testGames)]
			ev.Path, ev.System, ev.Name, ev.Arg = gm.path, gm.system, name, arg
			if k&0x80 != 0 {
				ev.Path = name
			}
			evs = append(evs, ev)
		}
		checkApply(t, New(), cfg, stampAt(1000), evs)
	})
}

// checkApply applies evs one by one (now jumping with them) and checks the invariants after each.
func checkApply(t *testing.T, st State, cfg Config, now Stamp, evs []Event) {
	t.Helper()
	s := haentities.Settings{ID: "fuzz"}
	apply := func(now Stamp, evs ...Event) {
		var out Output
		if len(evs) == 1 && evs[0].Source == SourceConfiggen {
			st, out = Record(st, cfg, now, evs...)
		} else {
			st, out = Apply(st, cfg, now, evs...)
		}
		snap := out.Snapshot
		switch snap.Activity {
		case haentities.ActivityMenu, haentities.ActivityScreensaver, haentities.ActivityPlaying, haentities.ActivityOff:
		default:
			t.Fatalf("activity %q", snap.Activity)
		}
		if snap.Playing != (snap.Current.ID != "") || snap.PlayTime < 0 {
			t.Fatalf("snapshot %+v", snap)
		}
		for _, l := range out.Logged {
			if l.ID == "" || l.Duration < cfg.withDefaults().MinSession || l.Duration < 0 {
				t.Fatalf("logged %+v with min %v", l, cfg.MinSession)
			}
		}
		if len(st.Window) > maxWindow || len(st.Sent) > maxMarks || len(st.Boots) > maxBoots || len(st.Pending) > maxPending {
			t.Fatalf("state over bounds: %d %d %d", len(st.Window), len(st.Sent), len(st.Boots))
		}
		for _, m := range out.Messages(s, now.At) {
			if m.Retain && len(m.Payload) == 0 {
				t.Fatalf("empty retained payload on %s", m.Topic)
			}
			if m.Kind == haentities.KindState && !strings.HasSuffix(m.Topic, "/attributes") && utf8.RuneCount(m.Payload) > haentities.MaxStateRunes {
				t.Fatalf("state over 255 characters on %s", m.Topic)
			}
			if !utf8.Valid(m.Payload) {
				t.Fatalf("invalid UTF-8 on %s: %q", m.Topic, m.Payload)
			}
		}
		b, err := Encode(st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); err != nil {
			t.Fatalf("state does not survive encoding: %v\n%s", err, b)
		}
	}
	for _, ev := range evs {
		if ev.BootID == now.BootID && ev.Boot > now.Boot || ev.BootID != now.BootID {
			now = ev.Stamp()
		}
		apply(now, ev)
	}
	apply(Stamp{At: now.At.Add(time.Hour), Boot: now.Boot + time.Hour, BootID: now.BootID})
}
