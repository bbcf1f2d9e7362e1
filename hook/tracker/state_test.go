package tracker

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEventValidate(t *testing.T) {
	ok := esGameStart(10, smbPath, smbName)
	tests := []struct {
		name    string
		mut     func(*Event)
		wantErr string
	}{
		{"valid", func(*Event) {}, ""},
		{"unknown kind", func(e *Event) { e.Kind = "game-crash" }, "unknown event kind"},
		{"unknown source", func(e *Event) { e.Source = "cron" }, "unknown source"},
		{"no source", func(e *Event) { e.Source = "" }, "unknown source"},
		{"no time", func(e *Event) { e.At = time.Time{} }, "no time"},
		{"negative boot", func(e *Event) { e.Boot = -1 }, "negative boot clock"},
		{"huge path", func(e *Event) { e.Path = strings.Repeat("a", 5000) }, "path is 5000 bytes"},
		{"invalid utf8", func(e *Event) { e.Name = "a\xffb" }, "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := ok
			tt.mut(&ev)
			err := ev.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	ev := esGameStart(10, smbPath, "a\xffb")
	ev.Path = strings.Repeat("é", 3000) // 6000 bytes
	n := ev.Normalize()
	if n.Name != "a\uFFFDb" {
		t.Errorf("name %q", n.Name)
	}
	if len(n.Path) > maxPathBytes || !strings.HasPrefix(ev.Path, n.Path) || len(n.Path)%2 != 0 {
		t.Errorf("path cut to %d bytes, not at a rune boundary", len(n.Path))
	}
	if err := n.Validate(); err != nil {
		t.Errorf("normalized event invalid: %v", err)
	}
}

func TestApplySkipsInvalid(t *testing.T) {
	bad := esEvent(KindStart, 1)
	bad.Kind = "bogus"
	st, out := Apply(New(), DefaultConfig(), stampAt(1), bad, esEvent(KindStart, 1))
	if len(out.Skipped) != 1 || !strings.Contains(out.Skipped[0].Error(), "bogus") {
		t.Errorf("Skipped = %v", out.Skipped)
	}
	if !out.Snapshot.Online || len(st.Window) != 1 {
		t.Errorf("valid event not applied: %+v, window %d", out.Snapshot, len(st.Window))
	}
}

func TestDecode(t *testing.T) {
	st, _ := Apply(New(), DefaultConfig(), stampAt(10), esEvent(KindStart, 0), esGameStart(10, smbPath, smbName))
	good, err := Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{"empty is new", nil, ""},
		{"round trip", good, ""},
		{"not json", []byte("{\"v\":1,"), "decode tracker state"},
		{"wrong type", []byte(`{"v":"1"}`), "decode tracker state"},
		{"future version", []byte(`{"v":2}`), "version 2"},
		{"no version", []byte(`{}`), "version 0"},
		{"bad event", []byte(`{"v":1,"win":[{"k":"nope","at":"2026-01-02T20:00:00Z","src":"es"}]}`), "unknown event kind"},
		{"too many boots", []byte(`{"v":1,"boots":["1","2","3","4","5","6","7","8","9"]}`), "over its bounds"},
		{"negative play time", []byte(`{"v":1,"core":{"play":-5}}`), "negative play time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Decode() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode() = %v", err)
			}
			again, err := Encode(got)
			if err != nil {
				t.Fatal(err)
			}
			if tt.in != nil && !bytes.Equal(again, tt.in) {
				t.Errorf("round trip changed the state:\n%s\n%s", tt.in, again)
			}
		})
	}
}

// TestDecodeResortsWindow: a window out of order (hand-edited, damaged) is put back in order.
func TestDecodeResortsWindow(t *testing.T) {
	st := New()
	st.Window = []Event{esEvent(KindGameEnd, 20), esGameStart(10, smbPath, smbName)}
	b, _ := Encode(st)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Window[0].Kind != KindGameStart {
		t.Errorf("window not sorted: %v", kindsOf(got.Window))
	}
}

// TestBatchIsOrdered: spooled events and the hook's own event applied together, in any order, end
// like the events applied one by one in order.
func TestBatchIsOrdered(t *testing.T) {
	cfg := DefaultConfig()
	evs := []Event{
		esEvent(KindStart, 0), esGameStart(10, smbPath, smbName), cgEvent(KindGameStart, 10.3, "nes", smbPath),
		cgEvent(KindGameEnd, 400, "nes", smbPath), esEvent(KindGameEnd, 400.03),
	}
	want := outcome(t, feed(t, cfg, evs, 0))
	rev := slices.Clone(evs)
	slices.Reverse(rev)
	now := stampAt(3600)
	st, out := Apply(New(), cfg, now, rev...)
	var r run
	r.collect(out)
	st, out = Apply(st, cfg, stampAt(7200))
	r.collect(out)
	r.snap = out.Snapshot
	if got := outcome(t, r); got != want {
		t.Errorf("batch gives\n%s\nwant\n%s", got, want)
	}
	_ = st
}

// TestLateEvents: an event older than the final horizon cannot be reordered; only safe ones apply.
func TestLateEvents(t *testing.T) {
	cfg := DefaultConfig()
	st, _ := Apply(New(), cfg, stampAt(10), esGameStart(10, smbPath, smbName))
	st, _ = Apply(st, cfg, stampAt(100), esEvent(KindSystemSelected, 100)) // game-start now final
	st, _ = Apply(st, cfg, stampAt(200), esEvent(KindSystemSelected, 200)) // horizon at 100

	// A late configgen report of the same launch merges.
	late := cgEvent(KindGameStart, 10.5, "nes", smbPath)
	st, out := Apply(st, cfg, stampAt(201), late)
	if len(out.Skipped) != 0 || st.Core.Open.Sources != sourceBit(SourceES)|sourceBit(SourceConfiggen) {
		t.Errorf("late duplicate start not merged: skipped %v, sources %b", out.Skipped, st.Core.Open.Sources)
	}
	// A late screensaver-start cannot be put in order: skipped, reported.
	st, out = Apply(st, cfg, stampAt(202), esEvent(KindScreensaverStart, 50, "dim"))
	if len(out.Skipped) != 1 || out.Snapshot.Screensaver {
		t.Errorf("late screensaver-start: skipped %v, screensaver %v", out.Skipped, out.Snapshot.Screensaver)
	}
	// A late game-end after the start ends and logs the session, with nothing time-sensitive.
	st, out = Apply(st, cfg, stampAt(203), cgEvent(KindGameEnd, 90, "nes", smbPath))
	if got := describeLogged(out.Logged, false); !slices.Equal(got, []string{smbName + "|nes|80|es"}) || len(out.Events) != 0 {
		t.Errorf("late game-end: logged %q, events %q", got, describeEvents(out.Events))
	}
	if out.Snapshot.Playing {
		t.Error("still playing after the late game-end")
	}
	_ = st
}

// TestStateStaysBounded: a flood of events within a second keeps the state small.
func TestStateStaysBounded(t *testing.T) {
	cfg := DefaultConfig()
	st := New()
	for i := 0; i < 1000; i++ {
		ev := screensaverPick(100+float64(i)*0.001, "nes", smbPath+strings.Repeat("x", i%50), smbName)
		if i%100 == 0 {
			ev = esEvent(KindSleep, 100+float64(i)*0.001)
		}
		st, _ = Apply(st, cfg, ev.Stamp(), ev)
	}
	if len(st.Window) > maxWindow || len(st.Sent) > maxMarks {
		t.Errorf("window %d, marks %d", len(st.Window), len(st.Sent))
	}
	b, _ := Encode(st)
	if len(b) > 64*1024 {
		t.Errorf("encoded state is %d bytes", len(b))
	}
	t.Logf("state after 1000 events in 1 s: %d bytes", len(b))
}
