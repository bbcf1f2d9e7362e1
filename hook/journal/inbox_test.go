package journal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

func TestInboxEncodeParse(t *testing.T) {
	r := InboxRecord{Uptime: 12345*time.Second + 670*time.Millisecond,
		Argv: []string{"game-start", "/userdata/roms/nes/Super\\ Mario\\ \\(W\\).nes", "end", "a\nb \"$x\" \xff"}}
	b := EncodeInbox(r)
	want := "cabinet-inbox-1\x0012345.67\x004\x00game-start\x00/userdata/roms/nes/Super\\ Mario\\ \\(W\\).nes\x00end\x00a\nb \"$x\" \xff\x00end\x00"
	if string(b) != want {
		t.Fatalf("Encode = %q\nwant     %q", b, want)
	}
	got, err := ParseInbox(b)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("Parse = %+v, %v; want %+v", got, err, r)
	}
}

func TestInboxParseRefuses(t *testing.T) {
	good := string(EncodeInbox(InboxRecord{Uptime: time.Second, Argv: []string{"wake"}}))
	tests := []struct {
		name, data string
		want       string
	}{
		{"empty", "", "not an inbox record"},
		{"foreign", "hello\n", "not an inbox record"},
		{"cut in a field", good[:len(good)-3], "cut short"},
		{"cut after a field", good[:strings.Index(good, "wake")+5], "cut short"},
		{"no arguments", "cabinet-inbox-1\x001.00\x000\x00end\x00", "argument count"},
		{"count too high", "cabinet-inbox-1\x001.00\x002\x00wake\x00end\x00", "the count says 2"},
		{"count not a number", "cabinet-inbox-1\x001.00\x00x\x00wake\x00end\x00", "argument count"},
		{"uptime negative", "cabinet-inbox-1\x00-1.00\x001\x00wake\x00end\x00", "uptime"},
		{"uptime garbage", "cabinet-inbox-1\x0012e3\x001\x00wake\x00end\x00", "uptime"},
		{"too large", "cabinet-inbox-1\x00" + strings.Repeat("x", MaxInboxRecord), "at most"},
	}
	for _, tt := range tests {
		if _, err := ParseInbox([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := ParseInbox([]byte(good[:len(good)-1])); !errors.Is(err, ErrInboxTorn) {
		t.Errorf("a record without its last NUL: %v, want ErrTorn", err)
	}
}

// A crashed daemon's inbox is taken in the order the events happened, and
// what cannot be read is reported, kept a while, then removed.
func TestInboxPendingInStampOrder(t *testing.T) {
	d := InboxDir{Path: t.TempDir()}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(d.Path, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("20.00-9", EncodeInbox(InboxRecord{Uptime: 20 * time.Second, Argv: []string{"wake"}}))
	write("10.00-7", EncodeInbox(InboxRecord{Uptime: 10 * time.Second, Argv: []string{"sleep"}}))
	write("10.00-3", EncodeInbox(InboxRecord{Uptime: 10 * time.Second, Argv: []string{"start"}}))
	write("torn", EncodeInbox(InboxRecord{Uptime: time.Second, Argv: []string{"wake"}})[:20])
	write("old-torn", []byte("garbage"))
	old := time.Now().Add(-2 * InboxStaleAfter)
	os.Chtimes(filepath.Join(d.Path, "old-torn"), old, old)
	write(".hidden", []byte("x"))
	ok, bad, err := d.Pending()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ok {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "10.00-3,10.00-7,20.00-9" {
		t.Errorf("order %v", names)
	}
	if len(bad) != 2 {
		t.Errorf("bad = %v, want the two unreadable files", bad)
	}
	if _, err := os.Stat(filepath.Join(d.Path, "old-torn")); !errors.Is(err, os.ErrNotExist) {
		t.Error("an unreadable file older than StaleAfter was kept")
	}
	if _, err := os.Stat(filepath.Join(d.Path, "torn")); err != nil {
		t.Error("a young unreadable file was removed at once")
	}
	if n := d.Count(); n != 4 {
		t.Errorf("Count = %d, want 4 (three records and the young torn one)", n)
	}
	now := tracker.Stamp{At: time.Unix(1e9, 0), Boot: 30 * time.Second, BootID: "boot-id-123"}
	// Read long after it was written: the end of its hundredth.
	ev, err := ok[1].event(now, 0)
	end := 10*time.Second + InboxResolution - time.Microsecond
	if err != nil || ev.Kind != tracker.KindSleep || ev.Boot != end || ev.BootID != "boot-id-123" || !ev.At.Equal(now.At.Add(end-now.Boot)) {
		t.Errorf("Event = %+v, %v; want it at the end of its hundredth on both clocks", ev, err)
	}
	// Read at once: the read's moment; after an earlier record of the same
	// hundredth: just after it.
	soon := tracker.Stamp{At: now.At, Boot: 10*time.Second + 3*time.Millisecond, BootID: "b"}
	if ev, _ := ok[1].event(soon, 0); ev.Boot != soon.Boot {
		t.Errorf("read at once: boot %v, want the read's %v", ev.Boot, soon.Boot)
	}
	if ev, _ := ok[1].event(soon, soon.Boot+time.Millisecond); ev.Boot != soon.Boot+time.Millisecond+time.Microsecond {
		t.Errorf("after a later-read record: boot %v, want a microsecond after it", ev.Boot)
	}
	// A sequence keeps records read at the same moment in their order.
	var seq InboxSequence
	a, _ := seq.Event(ok[0], now)
	b, _ := seq.Event(ok[1], now)
	if !(a.Boot < b.Boot) {
		t.Errorf("sequence: %v then %v, want increasing", a.Boot, b.Boot)
	}
	if _, err := seq.Event(InboxEntry{Name: "x", Record: InboxRecord{Uptime: time.Second, Argv: []string{"explode"}}}, now); err == nil {
		t.Error("sequence stamped an event the binary would refuse")
	}
	if k := ok[0].Key("0123456789abcdef"); k != "inbox-01234567-10.00-3" {
		t.Errorf("Key = %q", k)
	}
}

// Whatever a file holds, Parse returns one record whose encoding parses
// back to it, or an error; never more arguments than the bound.
func FuzzParseInbox(f *testing.F) {
	f.Add(EncodeInbox(InboxRecord{Uptime: time.Second, Argv: []string{"game-start", "/a b", "a", "A"}}))
	f.Add(EncodeInbox(InboxRecord{Uptime: 0, Argv: []string{"--source", "configgen", "gameStart", "nes", "libretro", "nestopia", "/x"}}))
	f.Add([]byte("cabinet-inbox-1\x00\x00\x00end\x00"))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseInbox(b)
		if err != nil {
			return
		}
		if len(r.Argv) == 0 || len(r.Argv) > maxArgs || r.Uptime < 0 {
			t.Fatalf("accepted %+v", r)
		}
		again, err := ParseInbox(EncodeInbox(r))
		if err != nil || !reflect.DeepEqual(again, InboxRecord{Uptime: r.Uptime.Truncate(10 * time.Millisecond), Argv: r.Argv}) {
			t.Fatalf("round trip of %+v: %+v, %v", r, again, err)
		}
		if !bytes.HasPrefix(b, []byte(InboxMagic)) {
			t.Fatal("accepted a record without the magic")
		}
	})
}

// A relative folder is refused: it would name a folder under the working
// directory, whose files the sweep would take for unreadable records.
func TestInboxRelativeDirRefused(t *testing.T) {
	d := InboxDir{Path: "inbox"}
	if _, _, err := d.Pending(); err == nil {
		t.Error("Pending on a relative path")
	}
	if err := d.Remove("x"); err == nil {
		t.Error("Remove on a relative path")
	}
	if _, err := d.Read("x"); err == nil {
		t.Error("Read on a relative path")
	}
}
