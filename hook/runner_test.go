package hook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/bootclock"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// recorder is a broker that acknowledges everything, in order.
type recorder struct {
	mu   sync.Mutex
	msgs []haentities.Message
}

func (p *recorder) Publish(_ context.Context, msgs []haentities.Message) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msgs...)
	return len(msgs), nil
}

func stamped(kind tracker.Kind) tracker.Event {
	return bootclock.Now().Event(kind, tracker.SourceES)
}

// A daemon that died between its ack and its commit left an event in the
// intake log; a hook running alone applies it first, then its own.
func TestStandaloneHookAppliesIntakeFirst(t *testing.T) {
	dir := t.TempDir()
	settings := haentities.Settings{ID: "runner_test"}
	intakePath := filepath.Join(dir, "intake.log")
	lg, err := journal.OpenIntake(intakePath)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := journal.IntakeRecord(journal.Keyed{Key: "acked-by-a-dead-daemon", Event: stamped(tracker.KindWake)})
	if err := lg.Append(rec); err != nil {
		t.Fatal(err)
	}
	lg.Close()

	pub := &recorder{}
	r := &Runner{
		Layout:    paths.Layout{State: dir, Run: filepath.Join(dir, "run")},
		Settings:  settings,
		Publisher: pub,
		Log:       zerolog.Nop(),
	}
	r.Handle(context.Background(), stamped(tracker.KindScreensaverStart))

	// The log's event reached the store and the broker; the hook's own too.
	if !hasPayload(pub.msgs, settings.StateTopic(haentities.Cabinet), `"event_type":"wake"`) {
		t.Fatal("the event left in the intake log was not applied")
	}
	if !hasPayload(pub.msgs, settings.StateTopic(haentities.Screensaver), "ON") {
		t.Fatal("the hook's own event was not applied")
	}
	if !hasPayload(pub.msgs, settings.StateTopic(haentities.Activity), haentities.ActivityScreensaver) {
		t.Fatal("activity does not show the screensaver")
	}
	b, err := os.ReadFile(intakePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, recs, _ := journal.ParseIntake(b); len(recs) != 0 {
		t.Fatalf("intake log still holds %d records", len(recs))
	}
}

func hasPayload(msgs []haentities.Message, topic, payload string) bool {
	for _, m := range msgs {
		if m.Topic == topic && strings.Contains(string(m.Payload), payload) {
			return true
		}
	}
	return false
}

// On a full disk a hook running alone may find that the store refuses its
// commit and the spool its file: the intake log, allocated in advance,
// keeps the event for the next owner of the store.
func TestStandaloneHookKeepsEventOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	peertest.SmallFS(t, dir, 1<<20)
	intakePath := filepath.Join(dir, "intake.log")
	lg, err := journal.OpenIntake(intakePath)
	if err != nil {
		t.Fatal(err)
	}
	lg.Close()
	r := &Runner{
		Layout:    paths.Layout{State: dir, Run: filepath.Join(dir, "run")},
		Settings:  haentities.Settings{ID: "full_disk"},
		Publisher: &recorder{},
		Log:       zerolog.Nop(),
	}
	// A new store: a few pages, too small for the first commit.
	s, err := store.Open(r.Layout.Store(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.MkdirAll(r.Layout.Spool(), 0o755)
	filler := peertest.FillDisk(t, dir)

	r.Handle(context.Background(), stamped(tracker.KindWake))
	b, err := os.ReadFile(intakePath)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, _ := journal.ParseIntake(b)
	items, bad := journal.FromIntake(recs)
	if len(items) != 1 || len(bad) != 0 || items[0].Event.Kind != tracker.KindWake {
		t.Fatalf("intake holds %d events (%v), want the wake event", len(items), bad)
	}

	// Space comes back: the next hook applies it, then its own.
	os.Remove(filler)
	pub := &recorder{}
	r.Publisher = pub
	r.Handle(context.Background(), stamped(tracker.KindScreensaverStart))
	if !hasPayload(pub.msgs, r.Settings.StateTopic(haentities.Cabinet), `"event_type":"wake"`) {
		t.Fatal("the kept event was not published once space came back")
	}
}

// Records a daemon was handed in its inbox and did not take before it died
// are applied by a hook running alone, in the order they were written,
// before its own event; the files go once they are in the store.
func TestStandaloneHookTakesTheInbox(t *testing.T) {
	dir := t.TempDir()
	pub := &recorder{}
	r := &Runner{
		Layout:    paths.Layout{State: dir, Run: filepath.Join(dir, "run")},
		Settings:  haentities.Settings{ID: "inbox_left"},
		Tracker:   tracker.DefaultConfig(),
		Publisher: pub,
		Log:       zerolog.Nop(),
	}
	box := r.Layout.Inbox()
	os.MkdirAll(box, 0o755)
	up := bootclock.Now().Boot - 10*time.Second // written before the hook's event
	for i, argv := range [][]string{{"screensaver-start", "random"}, {"screensaver-stop"}, {"sleep"}} {
		rec := journal.EncodeInbox(journal.InboxRecord{Uptime: up + time.Duration(i)*time.Second, Argv: argv})
		if err := os.WriteFile(filepath.Join(box, fmt.Sprintf("%d-%d", i, 100+i)), rec, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.Handle(context.Background(), stamped(tracker.KindWake))
	var kinds []string
	for _, m := range pub.msgs {
		if m.Topic == r.Settings.StateTopic(haentities.Cabinet) {
			kinds = append(kinds, string(m.Payload))
		}
	}
	if got := strings.Join(kinds, "|"); !strings.Contains(got, `"event_type":"sleep"`) || !strings.Contains(got, `"event_type":"wake"`) ||
		strings.Index(got, `"sleep"`) > strings.Index(got, `"wake"`) {
		t.Errorf("cabinet events %s, want the inbox's sleep before the hook's wake", got)
	}
	if !hasPayload(pub.msgs, r.Settings.StateTopic(haentities.Screensaver), "OFF") {
		t.Error("the inbox's screensaver events were not applied")
	}
	if ents, _ := os.ReadDir(box); len(ents) != 0 {
		t.Errorf("%d files left in the inbox", len(ents))
	}
}
