package tracker

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// TestMessagesOrderAndAge: states first (availability last among them), then the events and logged
// sessions in the order they happened (start at 0 s, session_start at 10 s, session_end at 400 s),
// time-sensitive ones with Created backdated by their age.
func TestMessagesOrderAndAge(t *testing.T) {
	cfg := DefaultConfig()
	evs := []Event{esEvent(KindStart, 0), esGameStart(10, smbPath, smbName), esEvent(KindGameEnd, 400)}
	now := stampAt(3600) // a spool ingested an hour late
	_, out := Apply(New(), cfg, now, evs...)
	s := haentities.Settings{ID: "x"}
	msgs := out.Messages(s, now.At)
	var kinds []string
	for _, m := range msgs {
		kinds = append(kinds, m.Kind.String())
	}
	want := strings.Repeat("state ", 11) + "availability time_sensitive time_sensitive session_end"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("message kinds\n got %s\nwant %s", got, want)
	}
	start := msgs[len(msgs)-3]
	if !strings.Contains(string(start.Payload), `"event_type":"start"`) {
		t.Fatalf("unexpected event %s", start.Payload)
	}
	if age := now.At.Sub(start.Created); age != time.Hour {
		t.Errorf("start event Created %v before now, want 1h", age)
	}
	if end := msgs[len(msgs)-1]; !end.Created.Equal(now.At) || end.Key == "" {
		t.Errorf("session_end Created %v key %q", end.Created, end.Key)
	}
}

// TestTrackerCaptureValidates runs the strict HA validator on everything the tracker makes over many
// stories: discovery, then every Apply's messages, as mosquitto_sub would capture them.
func TestTrackerCaptureValidates(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CABINET_REQUIRE_PEERS") == "1" {
			t.Fatalf("python3 is required (CABINET_REQUIRE_PEERS=1): %v", err)
		}
		t.Skip("python3 not found: skipping validate_discovery.py (install python3 to run it)")
	}
	s := haentities.Settings{ID: "0a1b2c3d", Name: "Arcade", Version: "test"}
	var capture bytes.Buffer
	write := func(msgs []haentities.Message) {
		for _, m := range msgs {
			r := 0
			if m.Retain {
				r = 1
			}
			fmt.Fprintf(&capture, "%d %s %s\n", r, m.Topic, m.Payload)
		}
	}
	write(haentities.Discovery(s, testBase))
	rng := rand.New(rand.NewPCG(5, 6))
	sessions := 0
	for i := 0; i < 10; i++ {
		g := &storyGen{r: rng}
		st := New()
		for _, ev := range g.story(30) {
			var out Output
			st, out = Apply(st, DefaultConfig(), ev.Stamp(), ev)
			sessions += len(out.Logged)
			write(out.Messages(s, ev.At))
		}
	}
	if sessions == 0 {
		t.Fatal("no session logged: the capture would not exercise session_end")
	}
	file := filepath.Join(t.TempDir(), "capture.txt")
	if err := os.WriteFile(file, capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	validator := filepath.Join("..", "..", "haentities", "testdata", "validate_discovery.py")
	out, err := exec.Command(py, validator, "--strict", "--format", "rtp", file).CombinedOutput()
	if err != nil {
		t.Fatalf("validate_discovery.py --strict: %v\n%s", err, tail(out, 40))
	}
	t.Logf("%d lines, %d sessions: %s", bytes.Count(capture.Bytes(), []byte("\n")), sessions, bytes.TrimSpace(out))
}

func tail(b []byte, lines int) []byte {
	parts := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return bytes.Join(parts, []byte("\n"))
}
