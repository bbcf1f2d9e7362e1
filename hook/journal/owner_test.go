package journal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// owner is an Owner on a fresh store, spool and intake log in dir, at a
// fixed moment.
func owner(t *testing.T, dir string) *Owner {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lg, err := OpenIntake(filepath.Join(dir, "intake.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lg.Close() })
	now := tracker.Stamp{At: t0.Add(time.Hour), Boot: 2 * time.Hour, BootID: "boot1"}
	return &Owner{Store: st, Spool: Spool{Dir: filepath.Join(dir, "spool")}, Intake: lg, Log: zerolog.Nop(),
		Now: func() tracker.Stamp { return now }}
}

var testRules = Rules{Settings: haentities.Settings{ID: "owner"}, Tracker: tracker.DefaultConfig(), Publishing: true}

// What the intake log, the spool and the caller hold is applied in one
// apply, in that order, each event once; the spool's files are removed and
// the intake's records retired, and nothing else is touched.
func TestOwnerAppliesIntakeSpoolThenEvents(t *testing.T) {
	dir := t.TempDir()
	o := owner(t, dir)
	acked := Keyed{"acked", ev(tracker.KindStart, 0)}
	if err := AppendIntake(o.Intake, acked); err != nil {
		t.Fatal(err)
	}
	spooled := Keyed{"spooled", ev(tracker.KindSleep, time.Second)}
	if err := o.Spool.Write(spooled); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(o.Spool.Dir, "notes.txt") // not an event: left alone
	os.WriteFile(stray, []byte("x"), 0o644)
	own := Keyed{"own", ev(tracker.KindWake, 2*time.Second)}
	// The caller also holds the acked event again (its ack came late): once.
	res, err := o.Apply(testRules, true, own, acked)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range res.Applied {
		got = append(got, k.Key)
	}
	if strings.Join(got, ",") != "acked,spooled,own" {
		t.Errorf("applied %v, want acked,spooled,own (intake, spool, caller; the duplicate once)", got)
	}
	if n, _ := o.Spool.Read(); len(n) != 0 {
		t.Errorf("spool still holds %d events", len(n))
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("a file that is no event was removed from the spool: %v", err)
	}
	if n := len(o.Intake.Pending()); n != 0 {
		t.Errorf("intake still holds %d records", n)
	}
	var types []string
	for _, e := range res.Events {
		types = append(types, string(e.Type))
	}
	if strings.Join(types, ",") != "start,sleep,wake" {
		t.Errorf("cabinet events %v, want start,sleep,wake", types)
	}
	// A flush applies nothing again.
	if res, err := o.Apply(testRules, true); err != nil || len(res.Applied) != 0 {
		t.Errorf("flush: applied %v, err %v", res.Applied, err)
	}
}

// A store that refuses the commit loses nothing: the spool keeps its file,
// the intake its record, and the caller is told.
func TestOwnerRefusedCommitKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	o := owner(t, dir)
	AppendIntake(o.Intake, Keyed{"acked", ev(tracker.KindStart, 0)})
	o.Spool.Write(Keyed{"spooled", ev(tracker.KindSleep, time.Second)})
	o.Store.Close() // every transaction now fails
	if _, err := o.Apply(testRules, true, Keyed{"own", ev(tracker.KindWake, 2*time.Second)}); err == nil {
		t.Fatal("apply on a closed store succeeded")
	}
	if n, _ := o.Spool.Read(); len(n) != 1 {
		t.Errorf("spool holds %d events after a refused commit, want 1", len(n))
	}
	if n := len(o.Intake.Pending()); n != 1 {
		t.Errorf("intake holds %d records after a refused commit, want 1", n)
	}
}

// publisher acknowledges the first n messages, then fails.
type publisher struct {
	n    int
	got  []haentities.Message
	fail error
}

func (p *publisher) Publish(_ context.Context, msgs []haentities.Message) (int, error) {
	k := min(p.n, len(msgs))
	p.got = append(p.got, msgs[:k]...)
	if k < len(msgs) {
		return k, p.fail
	}
	return k, nil
}

// Deliver marks what the broker acknowledged and leaves the rest pending,
// in order, for the next delivery.
func TestOwnerDeliverMarksAcknowledged(t *testing.T) {
	o := owner(t, t.TempDir())
	if _, err := o.Apply(testRules, true, Keyed{"k", ev(tracker.KindStart, 0)}); err != nil {
		t.Fatal(err)
	}
	cut := errors.New("connection lost")
	first := &publisher{n: 2, fail: cut}
	d, err := o.Deliver(context.Background(), first)
	if !errors.Is(err, cut) || d.Sent != 2 || d.Pending <= 2 {
		t.Fatalf("cut delivery = %+v, %v; want 2 sent of more, and the error", d, err)
	}
	rest := &publisher{n: 1 << 20}
	d, err = o.Deliver(context.Background(), rest)
	if err != nil || d.Sent != d.Pending || len(rest.got) != d.Pending {
		t.Fatalf("second delivery = %+v, %v", d, err)
	}
	for _, m := range first.got {
		for _, r := range rest.got {
			if m.Topic == r.Topic && string(m.Payload) == string(r.Payload) && m.Kind != haentities.KindTimeSensitive {
				t.Errorf("%s was delivered twice", m.Topic)
			}
		}
	}
	if d, _ := o.Deliver(context.Background(), rest); d.Pending != 0 {
		t.Errorf("%d messages still pending after a full delivery", d.Pending)
	}
}
