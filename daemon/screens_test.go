package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// screenEvent is an event of the second screens' stream, decoded.
type screenEvent struct {
	Kind string
	Data map[string]any
}

func (e screenEvent) str(k string) string {
	s, _ := e.Data[k].(string)
	return s
}

func queued(c *events.Client) []screenEvent {
	var out []screenEvent
	for {
		select {
		case ev := <-c.Events():
			var m map[string]any
			json.Unmarshal(ev.Data, &m)
			out = append(out, screenEvent{ev.Kind, m})
		default:
			return out
		}
	}
}

// screensOn is an engine whose applies reach a second screens' hub, a client of that hub, and
// apply, which applies an event and, when the engine arms its flush, moves the fake clock past it
// (the start or end made final by the engine's timer).
func screensOn(t *testing.T, achievements bool) (*engine, *clock.Fake, *Daemon, *events.Client, func(journal.Keyed)) {
	e, clk, logs := engineOn(t)
	e.rules.Settings.Achievements = achievements
	d := &Daemon{clock: clk, log: zerolog.New(logs), events: events.New(events.Options{Clock: clk})}
	e.observe = d.screenEvents
	c, err := d.events.Subscribe("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return e, clk, d, c, func(k journal.Keyed) {
		t.Helper()
		res, err := e.apply(k)
		if err != nil {
			t.Fatal(err)
		}
		if res.FlushIn > 0 {
			if err := clk.BlockUntil(ctx, 1); err != nil {
				t.Fatal(err)
			}
			clk.Advance(res.FlushIn + 50*time.Millisecond)
		}
	}
}

// TestScreenEvents: the engine's applies reach the second screens as
// now_playing (once per change of the game running, with its picture's
// address) and session events (session_start once the start is final,
// session_end once the session is logged).
func TestScreenEvents(t *testing.T) {
	e, clk, d, c, apply := screensOn(t, false)
	step := func(kind tracker.Kind) { t.Helper(); apply(e.event(kind)) }
	step(tracker.KindGameStart)
	clk.Advance(90 * time.Second)
	step(tracker.KindGameEnd)

	got := queued(c)
	var kinds []string
	for _, ev := range got {
		kinds = append(kinds, ev.Kind+":"+ev.str("type"))
	}
	want := "now_playing: session:session_start now_playing: session:session_end"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("events %q, want %q (%+v)", strings.Join(kinds, " "), want, got)
	}
	start, end := got[0], got[2]
	image := events.ImageURL("nes/" + es.GameID("/userdata/roms/nes/a.nes"))
	if start.Data["playing"] != true || start.str("game") != "A" || start.str("system") != "nes" || start.str("image") != image || start.str("session_id") == "" {
		t.Errorf("now_playing at the start: %+v", start.Data)
	}
	if end.Data["playing"] != false || end.str("game") != "" || end.str("at") == "" {
		t.Errorf("now_playing at the end: %+v", end.Data)
	}
	id := start.str("session_id")
	if got[1].str("session_id") != id || got[3].str("session_id") != id || got[3].str("game") != "A" || got[3].str("ended") == "" {
		t.Errorf("sessions %+v and %+v, want both of session %s", got[1].Data, got[3].Data, id)
	}
	// Played 90 s, and the few seconds the start took to be final.
	if d, _ := got[3].Data["duration_s"].(float64); d < 90 || d > 100 {
		t.Errorf("duration_s %v, want about 90", got[3].Data["duration_s"])
	}
	// A new screen gets the state at once.
	late, _ := d.events.Subscribe("")
	if q := queued(late); len(q) != 2 || q[0].Kind != events.KindNowPlaying || q[0].Data["playing"] != false || q[1].str("type") != "session_end" {
		t.Errorf("replay to a new client: %+v", q)
	}
}

// TestScreenAchievements: an unlock during a game reaches the second screens
// as Home Assistant gets it — cleaned, with the game and session — and only
// with RetroAchievements on (as event.batocera_achievement is announced).
func TestScreenAchievements(t *testing.T) {
	for _, on := range []bool{true, false} {
		e, clk, _, c, apply := screensOn(t, on)
		apply(e.event(tracker.KindGameStart))
		clk.Advance(10 * time.Second)
		unlock := e.owner.Now().Event(tracker.KindAchievement, tracker.SourceConfiggen)
		unlock.Unlock = tracker.Unlock{ID: 4242, Title: "First\x1b[31m Blood\u202e", Description: "Beat the first boss"}
		apply(journal.NewKeyed(unlock))
		clk.Advance(10 * time.Second)
		apply(e.event(tracker.KindGameStart)) // another game: the first ends, everything final

		var got []screenEvent
		for _, ev := range queued(c) {
			if ev.Kind == events.KindAchievement {
				got = append(got, ev)
			}
		}
		if !on {
			if len(got) != 0 {
				t.Errorf("RetroAchievements off: %+v on the screens", got)
			}
			continue
		}
		if len(got) != 1 {
			t.Fatalf("achievement events %+v, want one", got)
		}
		a := got[0]
		if a.Data["id"] != float64(4242) || a.str("title") != "First[31m Blood" || a.str("description") != "Beat the first boss" ||
			a.str("game") != "A" || a.str("system") != "nes" || a.str("session_id") == "" || a.str("at") == "" {
			t.Errorf("achievement %+v", a.Data)
		}
	}
}

// sseEvents reads an event stream's events (comments and the retry
// delay skipped).
func sseEvents(t *testing.T, body io.Reader) func() screenEvent {
	br := bufio.NewReader(body)
	return func() screenEvent {
		t.Helper()
		var ev screenEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("the event stream: %v", err)
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "" && ev.Kind != "":
				return ev
			case strings.HasPrefix(line, "event: "):
				ev.Kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data); err != nil {
					t.Fatalf("event data %q: %v", line, err)
				}
			}
		}
	}
}

// TestScreensOverHTTP: the daemon serves /events and the marquee pictures
// to a token with the read scope: the state at once, a game's start with
// its marquee read from ES's files, a selection the feed hands over with its
// picture; a token in the query is refused and stays out of the log.
func TestScreensOverHTTP(t *testing.T) {
	r := newRig(t, nil, func(r *rig) { r.cfg.Tools.Root = r.cab.Root })
	tok, err := httpauth.ReadToken(r.cfg.Layout.Token())
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + r.d.HTTPAddr()
	get := func(ctx context.Context, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	resp, err := http.Get(base + events.EventsPath + "?token=" + tok)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a token in the query: %d", resp.StatusCode)
	}
	r.waitLog("the refusal", func() bool { return len(r.logs.entries("MCP request refused")) > 0 })
	if strings.Contains(r.logs.String(), tok) {
		t.Errorf("the log holds the token")
	}

	ctx, cancel := context.WithCancel(cabinettest.Context(t))
	defer cancel()
	stream := get(ctx, events.EventsPath)
	defer stream.Body.Close()
	if stream.StatusCode != 200 {
		t.Fatalf("events: %d", stream.StatusCode)
	}
	next := sseEvents(t, stream.Body)
	if ev := next(); ev.Kind != events.KindNowPlaying || ev.Data["playing"] != false {
		t.Fatalf("the first event %+v, want now_playing, idle", ev)
	}

	// A game with a marquee starts.
	games := r.cab.Library.Games("nes")
	game := games[0]
	var png1 bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 300, 100))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	img.Set(0, 0, color.Black)
	png.Encode(&png1, img)
	if err := es.NewMetadataWriter(mustES(t, r)).UploadMedia(ctx, "nes", game.ID, "marquee", "image/png", png1.Bytes()); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "ES to take the launch", nil, func() (bool, string) {
		if err := r.cab.ES.Launch("nes", game.ID); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	waitRA(t, r.cab.RetroArch, "game loaded", func(s fakeretroarch.Snapshot) bool { return s.Loaded })
	running, _ := r.cab.ES.Running()
	ev := r.stamped(tracker.KindGameStart)
	ev.Path, ev.Name, ev.System = running.Path, running.Name, "nes"
	r.deliver(ev)
	var playing screenEvent
	for playing.Data["playing"] != true {
		playing = next()
	}
	if want := events.ImageURL("nes/" + game.ID); playing.str("image") != want {
		t.Fatalf("now_playing %+v, want the image %s", playing.Data, want)
	}
	pic := get(ctx, playing.str("image"))
	b, _ := io.ReadAll(pic.Body)
	pic.Body.Close()
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(b)); pic.StatusCode != 200 || pic.Header.Get("Content-Type") != "image/jpeg" || err != nil || cfg.Width != 300 {
		t.Fatalf("the marquee: %d %s %v %+v", pic.StatusCode, pic.Header.Get("Content-Type"), err, cfg)
	}

	// The selection feed hands over a selection and its picture.
	r.d.screenSelection("nes", "feed0123", events.Selection{Game: "Feed Game", System: "nes"}, b)
	sel := next()
	for sel.Kind != events.KindSelection {
		sel = next()
	}
	if sel.str("game") != "Feed Game" || sel.str("image") != events.ImageURL("nes/feed0123") || sel.str("at") == "" {
		t.Fatalf("selection %+v", sel.Data)
	}
	pic = get(ctx, sel.str("image"))
	got, _ := io.ReadAll(pic.Body)
	pic.Body.Close()
	if pic.StatusCode != 200 || !bytes.Equal(got, b) {
		t.Errorf("the selection's picture: %d, %d bytes (want the %d the feed gave)", pic.StatusCode, len(got), len(b))
	}
	// A system has no picture; a game the feed found none for has none either.
	r.d.screenSelection("nes", "", events.Selection{System: "nes", SystemName: "Nintendo"}, nil)
	r.d.screenSelection("nes", "feed4567", events.Selection{Game: "Bare", System: "nes"}, nil)
	for _, want := range []string{"Nintendo", "Bare"} {
		sel := next()
		for sel.Kind != events.KindSelection {
			sel = next()
		}
		if sel.str("image") != "" || (sel.str("system_name") != want && sel.str("game") != want) {
			t.Errorf("selection %+v, want %s without a picture", sel.Data, want)
		}
	}
	pic = get(ctx, events.ImageURL("nes/feed4567"))
	pic.Body.Close()
	if pic.StatusCode != http.StatusNotFound {
		t.Errorf("the picture of a game without one: %d", pic.StatusCode)
	}
}

func mustES(t *testing.T, r *rig) *es.Client {
	t.Helper()
	c, err := es.New(es.Config{URL: r.cab.ESURL()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMarqueesKept: a picture is read from ES's files once and kept two
// minutes; "none" half a minute; ES failing five seconds (a room of
// screens asking at once costs ES one look-up); what the selection feed
// hands over is served without asking ES.
func TestMarqueesKept(t *testing.T) {
	root := t.TempDir()
	file := "/userdata/roms/nes/media/marquees/alpha.png"
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 40, 20)))
	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, file)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, file), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(rigEpoch)
	asked := map[string]int{}
	var failing error
	m := &marquees{root: func() string { return root }, now: clk.Now,
		game: func(_ context.Context, system, id string) (es.Game, error) {
			asked[system+"/"+id]++
			switch {
			case failing != nil:
				return es.Game{}, failing
			case id == "alpha":
				return es.Game{Marquee: file}, nil
			case id == "bare":
				return es.Game{Marquee: "/userdata/roms/nes/media/marquees/missing.png"}, nil
			}
			return es.Game{}, es.ErrNotFound
		}}
	ctx := context.Background()
	look := func(key string) error {
		t.Helper()
		data, ctype, err := m.Marquee(ctx, key)
		if err == nil {
			if cfg, derr := jpeg.DecodeConfig(bytes.NewReader(data)); derr != nil || ctype != "image/jpeg" || cfg.Width != 40 {
				t.Fatalf("%s: %s %+v %v", key, ctype, cfg, derr)
			}
		}
		return err
	}
	for range 3 {
		if err := look("nes/alpha"); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"nes/bare", "nes/gone"} {
			if err := look(key); !errors.Is(err, events.ErrNoPicture) {
				t.Fatalf("%s: %v, want ErrNoPicture", key, err)
			}
		}
	}
	if asked["nes/alpha"] != 1 || asked["nes/bare"] != 1 || asked["nes/gone"] != 1 {
		t.Errorf("ES asked %v, want once each", asked)
	}
	clk.Advance(noneLife)
	look("nes/alpha")
	look("nes/gone")
	if asked["nes/alpha"] != 1 || asked["nes/gone"] != 2 {
		t.Errorf("after %v: ES asked %v", noneLife, asked)
	}
	clk.Advance(marqueeLife)
	failing = es.ErrUnavailable
	for range 3 {
		if err := look("nes/alpha"); !errors.Is(err, es.ErrUnavailable) {
			t.Fatalf("ES down: %v", err)
		}
	}
	if asked["nes/alpha"] != 2 {
		t.Errorf("ES down: asked %d times, want once for the three", asked["nes/alpha"])
	}
	clk.Advance(failedLife)
	failing = nil
	if err := look("nes/alpha"); err != nil || asked["nes/alpha"] != 3 {
		t.Errorf("ES back: %v, asked %d", err, asked["nes/alpha"])
	}

	jpg, _, _ := m.Marquee(ctx, "nes/alpha")
	m.put("snes/feed", jpg)
	if data, _, err := m.Marquee(ctx, "snes/feed"); err != nil || !bytes.Equal(data, jpg) || asked["snes/feed"] != 0 {
		t.Errorf("handed over: %v, asked %d", err, asked["snes/feed"])
	}
	if _, _, err := m.Marquee(ctx, "nokey"); !errors.Is(err, events.ErrNoPicture) {
		t.Errorf("a key without a system: %v", err)
	}
}
