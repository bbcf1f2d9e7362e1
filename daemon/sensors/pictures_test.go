package sensors

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// isJPEG reports whether a picture entity's payload (base64) is a JPEG.
func isJPEG(payload string) bool {
	b, err := base64.StdEncoding.DecodeString(payload)
	return err == nil && bytes.HasPrefix(b, []byte{0xff, 0xd8})
}

// writePNG writes a w×h picture of one colour at path.
func writePNG(t *testing.T, path string, w, h int, c color.Color) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestArtwork: the placeholder while idle; the running game's box art (a JPEG) once per game,
// else its marquee; the placeholder again for a game with no usable picture, and when it ends.
func TestArtwork(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "box.png"), 40, 60, color.RGBA{200, 10, 10, 255})
	os.WriteFile(filepath.Join(dir, "text.png"), []byte("not a picture"), 0o644)
	games := map[string]es.Game{
		es.GameID("/userdata/roms/nes/a.nes"): {Thumbnail: filepath.Join(dir, "box.png")},
		es.GameID("/userdata/roms/nes/b.nes"): {Thumbnail: filepath.Join(dir, "missing.png"), Marquee: filepath.Join(dir, "text.png")},
	}
	h, c := newHost(haentities.Sources{}), clock.NewFake(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC))
	p := &Pictures{Host: h, Clock: c, Log: cabinettest.Logger(t),
		Game: func(_ context.Context, _, id string) (es.Game, error) { return games[id], nil }}
	topic := h.Rules().Settings.StateTopic(haentities.Artwork)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.RunArtwork(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	placeholder := base64.StdEncoding.EncodeToString(artwork.Placeholder())
	count := func(n int) func() bool { return func() bool { return len(h.payloads(topic)) == n } }
	h.wait(t, "the placeholder while idle", count(1))
	play := func(rom string) {
		h.setSnapshot(haentities.Snapshot{Playing: rom != "", Current: haentities.Session{System: "nes", Rom: rom}})
	}
	play("/userdata/roms/nes/a.nes")
	h.wait(t, "a's box art", count(2))
	pics := h.payloads(topic)
	if pics[0] != placeholder || pics[1] == placeholder || !isJPEG(pics[1]) {
		t.Fatalf("pictures: the first is the placeholder %v, the second a JPEG %v", pics[0] == placeholder, isJPEG(pics[1]))
	}
	play("/userdata/roms/nes/a.nes") // the same game applied again: nothing new
	play("/userdata/roms/nes/b.nes")
	h.wait(t, "b's placeholder", count(3))
	play("")
	h.wait(t, "the placeholder after the game", count(4))
	if got := h.payloads(topic); got[2] != placeholder || got[3] != placeholder {
		t.Error("a game without a usable picture, or no game, shows something else than the placeholder")
	}
}

// TestLastScreenshot: the placeholder before the first screenshot; a new file once it has
// settled; a file that is no picture is skipped and the previous one stays.
func TestLastScreenshot(t *testing.T) {
	dir := t.TempDir()
	h, c := newHost(haentities.Sources{}), clock.NewFake(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC))
	logs := &logSink{}
	p := &Pictures{Host: h, Clock: c, Log: zerolog.New(logs), ScreenshotDir: dir}
	topic := h.Rules().Settings.StateTopic(haentities.LastScreenshot)
	count := func(n int) func() bool { return func() bool { return len(h.payloads(topic)) == n } }
	run(t, c, p.RunLastScreenshot)
	h.wait(t, "the placeholder before the first screenshot", count(1))
	writePNG(t, filepath.Join(dir, "shot-1.png"), 32, 24, color.RGBA{0, 0, 200, 255})
	// The folder is read at the minute's tick too, whatever fsnotify says.
	c.Advance(time.Minute)
	h.wait(t, "the screenshot", count(2))
	if got := h.payloads(topic)[1]; !isJPEG(got) {
		t.Fatal("the screenshot is not published as a JPEG")
	}
	later := time.Now().Add(time.Hour)
	bad := filepath.Join(dir, "shot-2.png")
	os.WriteFile(bad, []byte("truncated"), 0o644)
	os.Chtimes(bad, later, later)
	c.Advance(time.Minute)
	logs.wait(t, "the damaged file's log line", "screenshot not shown")
	if n := len(h.payloads(topic)); n != 2 {
		t.Errorf("%d pictures after a damaged newest file, want the previous one kept (2)", n)
	}
}

// TestDiagnostics: one round at once and every Every while MQTT is configured, sent again even
// unchanged; nothing without MQTT.
func TestDiagnostics(t *testing.T) {
	h, c := newHost(haentities.Sources{}), clock.NewFake(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC))
	version := "1.2.3"
	g := &Diagnostics{Host: h, Clock: c, Every: time.Minute,
		Read: func() haentities.DiagnosticValues { return haentities.DiagnosticValues{CabinetVersion: version} }}
	topic := h.Rules().Settings.StateTopic(haentities.CabinetVersion)
	run(t, c, g.Run)
	h.wait(t, "the first round", func() bool { return len(h.payloads(topic)) == 1 })
	c.Advance(time.Minute)
	h.wait(t, "the second round, unchanged", func() bool { return len(h.payloads(topic)) == 2 })
	h.mu.Lock()
	h.rules.Publishing = false
	h.mu.Unlock()
	g.Record()
	if n := len(h.payloads(topic)); n != 2 {
		t.Errorf("a round without MQTT stored %d messages", n-2)
	}
}

// logSink is a log that a test waits on, line by line.
type logSink struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{}
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return len(p), nil
}

// wait waits until the log holds text.
func (l *logSink) wait(t *testing.T, what, text string) {
	t.Helper()
	cabinettest.Await(t, what, l.wake, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return strings.Contains(l.buf.String(), text)
	})
}

// wake is a channel closed at the next write.
func (l *logSink) wake() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}
