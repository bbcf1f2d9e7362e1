package store

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

var t0 = time.Date(2026, 11, 30, 20, 0, 0, 0, time.FixedZone("CET", 3600))

func open(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func state(topic, payload string) haentities.Message {
	return haentities.Message{Topic: topic, Payload: []byte(payload), QoS: 1, Retain: true, Kind: haentities.KindState, Created: t0}
}

func sessionEnd(id string, at time.Time) haentities.Message {
	return haentities.Message{Topic: "batocera/x/game_session", Payload: []byte(`{"event_type":"session_end","session_id":"` + id + `"}`),
		QoS: 1, Kind: haentities.KindSessionEnd, Key: id, Created: at}
}

func timed(key string, at time.Time) haentities.Message {
	return haentities.Message{Topic: "batocera/x/cabinet", Payload: []byte(`{"event_type":"start"}`), QoS: 1, Kind: haentities.KindTimeSensitive, Key: key, Created: at}
}

func record(t *testing.T, s *Store, msgs ...haentities.Message) {
	t.Helper()
	if err := s.Update(func(tx *Tx) error { return tx.Record(msgs...) }); err != nil {
		t.Fatal(err)
	}
}

func topics(items []Item) string {
	var out []string
	for _, it := range items {
		out = append(out, it.Topic+"="+string(it.Payload))
	}
	return strings.Join(out, " ")
}

func TestRetainedKeepsLatestAndDeliveryMarks(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	record(t, s, state("a", "1"), state("b", "x"), state("a", "2"))
	items, err := s.Pending(t0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topics(items), "b=x a=2"; got != want {
		t.Fatalf("pending = %q, want %q (latest value only, in recording order)", got, want)
	}
	if err := s.MarkDelivered(items); err != nil {
		t.Fatal(err)
	}
	record(t, s, state("a", "2")) // unchanged: stays delivered
	if items, _ := s.Pending(t0); len(items) != 0 {
		t.Fatalf("unchanged value became pending: %q", topics(items))
	}
	// A value that changes between Pending and MarkDelivered stays pending.
	record(t, s, state("a", "3"))
	items, _ = s.Pending(t0)
	record(t, s, state("a", "4"))
	s.MarkDelivered(items)
	if items, _ := s.Pending(t0); topics(items) != "a=4" {
		t.Fatalf("pending after a racing change = %q, want a=4", topics(items))
	}
	all, _ := s.Retained()
	if len(all) != 2 || string(all[1].Payload) != "4" {
		t.Errorf("Retained = %v", all)
	}
}

func TestQueueOrderDedupeAndExpiry(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{EventWindow: time.Minute})
	record(t, s, sessionEnd("s1", t0), timed("start@1", t0), sessionEnd("s2", t0.Add(time.Second)), sessionEnd("s1", t0))
	items, _ := s.Pending(t0.Add(10 * time.Second))
	if len(items) != 3 || items[0].Key != "s1" || items[1].Key != "start@1" || items[2].Key != "s2" {
		t.Fatalf("pending = %v", items)
	}
	// Two hours later the broker is back: sessions still go, the start event is too late.
	items, _ = s.Pending(t0.Add(2 * time.Hour))
	if len(items) != 2 || items[0].Key != "s1" || items[1].Key != "s2" {
		t.Fatalf("pending after the window = %v", items)
	}
	if err := s.MarkDelivered(items[:1]); err != nil {
		t.Fatal(err)
	}
	record(t, s, sessionEnd("s1", t0)) // delivered before: refused
	items, _ = s.Pending(t0.Add(2 * time.Hour))
	if len(items) != 1 || items[0].Key != "s2" {
		t.Fatalf("pending = %v", items)
	}
	st, _ := s.Stats()
	if st.Expired != 1 || st.QueueDepth != 1 || st.Dropped != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestQueueBounded(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{MaxQueue: 10, MaxQueueBytes: 1 << 20})
	for i := 0; i < 25; i++ {
		record(t, s, sessionEnd(fmt.Sprintf("s%02d", i), t0))
	}
	items, _ := s.Pending(t0)
	if len(items) != 10 || items[0].Key != "s15" || items[9].Key != "s24" {
		t.Fatalf("pending = %d items from %v", len(items), items[0].Key)
	}
	st, _ := s.Stats()
	if st.Dropped != 15 || st.QueueDepth != 10 {
		t.Errorf("stats = %+v", st)
	}
	s2 := open(t, filepath.Join(t.TempDir(), "b.db"), Options{MaxQueue: 1000, MaxQueueBytes: 2000})
	for i := 0; i < 50; i++ {
		record(t, s2, sessionEnd(fmt.Sprintf("s%02d", i), t0))
	}
	st, _ = s2.Stats()
	if st.QueueBytes > 2000 || st.Dropped == 0 {
		t.Errorf("byte bound not kept: %+v", st)
	}
}

func TestDiscoveryClearsStaleConfigs(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	cfg := func(topic string) haentities.Message {
		return haentities.Message{Topic: topic, Payload: []byte(`{"name":"x"}`), QoS: 1, Retain: true, Kind: haentities.KindDiscovery, Created: t0}
	}
	disc := func(msgs ...haentities.Message) {
		if err := s.Update(func(tx *Tx) error { return tx.RecordDiscovery(msgs, t0) }); err != nil {
			t.Fatal(err)
		}
	}
	disc(cfg("homeassistant/sensor/a/config"), cfg("homeassistant/sensor/b/config"))
	items, _ := s.Pending(t0)
	s.MarkDelivered(items)
	disc(cfg("homeassistant/sensor/a/config"))
	items, _ = s.Pending(t0)
	if len(items) != 1 || items[0].Topic != "homeassistant/sensor/b/config" || len(items[0].Payload) != 0 || !items[0].Retain {
		t.Fatalf("want one retained empty clear of b, got %v", items)
	}
	s.MarkDelivered(items)
	disc(cfg("homeassistant/sensor/a/config"))
	if items, _ := s.Pending(t0); len(items) != 0 {
		t.Errorf("the clear was sent again: %v", items)
	}
}

func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cabinet.db")
	s := open(t, path, Options{})
	start := time.Now()
	_, err := Open(path, Options{LockTimeout: 30 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("Open waited %v", waited)
	}
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open after Close = %v", err)
	}
	s2.Close()
}

func TestDamagedStoreIsMovedAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cabinet.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("garbage!", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, path, Options{})
	if s.Quarantined == "" {
		t.Fatal("damaged store not reported")
	}
	if b, err := os.ReadFile(s.Quarantined); err != nil || !strings.HasPrefix(string(b), "garbage!") {
		t.Errorf("the damaged file was not kept: %v", err)
	}
	record(t, s, state("a", "1"))
}

func TestSessionsQuery(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	err := s.Update(func(tx *Tx) error {
		for i := 0; i < 5; i++ {
			sys := "nes"
			if i%2 == 1 {
				sys = "snes"
			}
			start := t0.Add(time.Duration(i) * time.Hour)
			if err := tx.AppendSession(haentities.Session{ID: fmt.Sprintf("%d-x", start.Unix()), Game: fmt.Sprint("g", i), System: sys, Started: start, Ended: start.Add(time.Hour)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Sessions(Query{Since: t0.Add(time.Hour), Until: t0.Add(4 * time.Hour), System: "snes"})
	if len(got) != 2 || got[0].Game != "g3" || got[1].Game != "g1" {
		t.Errorf("sessions = %+v", got)
	}
	got, _ = s.Sessions(Query{Limit: 2})
	if len(got) != 2 || got[0].Game != "g4" {
		t.Errorf("limit = %+v", got)
	}
}

// TestCrashNeverLosesCommittedSessions kills a child process with SIGKILL at
// random moments while it commits sessions, 100 times, and checks that the
// store always opens and holds every session the child saw committed.
func TestCrashNeverLosesCommittedSessions(t *testing.T) {
	if path := os.Getenv("OUTBOX_CRASH_CHILD"); path != "" {
		crashChild(path)
		return
	}
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	path := filepath.Join(t.TempDir(), "cabinet.db")
	committed := map[string]bool{}
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashNeverLosesCommittedSessions$")
		cmd.Env = append(os.Environ(), "OUTBOX_CRASH_CHILD="+path, fmt.Sprint("OUTBOX_ROUND=", round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		want := 1 + rand.Intn(20)
		for n := 0; n < want && sc.Scan(); n++ {
			committed[sc.Text()] = true
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for sc.Scan() {
			committed[sc.Text()] = true // lines already written when the kill landed
		}
		cmd.Wait()
		s, err := Open(path, Options{LockTimeout: time.Second})
		if err != nil {
			t.Fatalf("round %d: store does not open after kill -9: %v", round, err)
		}
		if s.Quarantined != "" {
			t.Fatalf("round %d: store damaged by kill -9", round)
		}
		got, err := s.Sessions(Query{})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, g := range got {
			have[g.ID] = true
		}
		for id := range committed {
			if !have[id] {
				t.Fatalf("round %d: committed session %s lost", round, id)
			}
		}
	}
	t.Logf("%d sessions committed across %d kills, none lost", len(committed), rounds)
}

func crashChild(path string) {
	s, err := Open(path, Options{LockTimeout: 5 * time.Second})
	if err != nil {
		os.Exit(3)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-%06d", os.Getenv("OUTBOX_ROUND"), i)
		err := s.Update(func(tx *Tx) error {
			if err := tx.SetTrackerState([]byte(strings.Repeat("s", 2000))); err != nil {
				return err
			}
			if err := tx.Record(sessionEnd(id, t0), state("now", id)); err != nil {
				return err
			}
			return tx.AppendSession(haentities.Session{ID: id, Game: "g", Started: t0})
		})
		if err != nil {
			os.Exit(4)
		}
		fmt.Fprintln(w, id)
		w.Flush()
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(entry{Seq: 7, Kind: haentities.KindSessionEnd, QoS: 1, Created: t0, Topic: "a/b", Key: "k", Payload: []byte("{}")}.encode())
	f.Add(entry{Kind: haentities.KindState, Retain: true, Delivered: true, Topic: "t"}.encode())
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			return
		}
		again, err := decodeEntry(e.encode())
		if err != nil || again.Topic != e.Topic || again.Key != e.Key || string(again.Payload) != string(e.Payload) || again.Seq != e.Seq {
			t.Fatalf("round trip: %+v vs %+v (%v)", e, again, err)
		}
	})
}

// Only a file bbolt read and rejected is moved aside; a path the system
// refuses is an error that leaves the file where it is.
func TestOpenTellsDamagedFromUnusable(t *testing.T) {
	valid := func(t *testing.T, path string) {
		s := open(t, path, Options{})
		record(t, s, state("a", "1"))
		s.Close()
	}
	cases := []struct {
		name      string
		prepare   func(t *testing.T, path string)
		wantMoved bool
	}{
		{"garbage", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("garbage!", 4096)), 0o600)
		}, true},
		{"cut short", func(t *testing.T, path string) {
			valid(t, path)
			os.Truncate(path, 100)
		}, true},
		{"both meta pages damaged", func(t *testing.T, path string) {
			valid(t, path)
			b, _ := os.ReadFile(path)
			ps := os.Getpagesize()
			for _, off := range []int{0, ps} {
				for i := off + 16; i < off+64; i++ {
					b[i] ^= 0xa5
				}
			}
			os.WriteFile(path, b, 0o600)
		}, true},
		{"a folder in its place", func(t *testing.T, path string) {
			os.Mkdir(path, 0o755)
			os.WriteFile(filepath.Join(path, "keep"), []byte("x"), 0o600)
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cabinet.db")
			c.prepare(t, path)
			s, err := Open(path, Options{})
			if !c.wantMoved {
				if err == nil {
					s.Close()
					t.Fatal("Open succeeded")
				}
				if errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "check free space and permissions") {
					t.Fatalf("Open error = %v, want a plain error with advice", err)
				}
				if _, serr := os.Stat(filepath.Join(path, "keep")); serr != nil {
					t.Fatalf("the path was moved or changed: %v", serr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if s.Quarantined == "" {
				t.Fatal("damaged store not moved aside")
			}
			record(t, s, state("b", "2"))
		})
	}
}
