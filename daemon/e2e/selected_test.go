package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/selection"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// selectedJSON is the payload of batocera/<id>/selected as the test reads it.
type selectedJSON struct {
	Game, System, SystemName, ROM, Source, Image string
}

func (s *selectedJSON) UnmarshalJSON(b []byte) error {
	var w struct {
		Game       string `json:"game"`
		System     string `json:"system"`
		SystemName string `json:"system_name"`
		ROM        string `json:"rom"`
		Source     string `json:"source"`
		Image      string `json:"image"`
	}
	err := json.Unmarshal(b, &w)
	*s = selectedJSON{Game: w.Game, System: w.System, SystemName: w.SystemName, ROM: w.ROM, Source: w.Source, Image: w.Image}
	return err
}

// key names a selection: its ROM, or "system <name>" for a system.
func (s selectedJSON) key() string {
	if s.ROM != "" {
		return s.ROM
	}
	return "system " + s.System
}

// plainGames are the fixture's games whose path reaches a hook intact through ES's sh -c
// (es-events.md §4: "$words" are expanded, a stem with "(" and no space is a syntax error).
func plainGames(lib *library.Library) []library.Game {
	var out []library.Game
	for _, sys := range []string{"nes", "snes", "megadrive", "mame"} {
		for _, g := range lib.Games(sys) {
			if strings.ContainsAny(g.Path, "$`\"\\") {
				continue
			}
			if !strings.Contains(g.Path, " ") && strings.ContainsAny(g.Path, "()'&;!") {
				continue
			}
			out = append(out, g)
		}
	}
	return out
}

// findGame is the first game of pool whose name starts with prefix.
func findGame(t testing.TB, pool []library.Game, prefix string) library.Game {
	t.Helper()
	for _, g := range pool {
		if strings.HasPrefix(g.Name, prefix) {
			return g
		}
	}
	t.Fatalf("no %s among the games", prefix)
	return library.Game{}
}

// TestSelectionFeed (issue 29): 200 cursor moves in scrolls of 25, fired by the fake ES
// through the installed wrappers under /bin/sh (dash) a few milliseconds apart, with a
// random-video screensaver in the middle and a game launched at the end, reach Home Assistant
// as the selections that held for the settle time only, in order: no step of a scroll, nothing
// when a scroll comes back to the game shown, none of the screensaver's games, nothing when it
// stops (the player's pick is still the one shown), the running game while it runs, then the
// player's pick again. ES's marquee is the picture of a game that has one, the wheel (uploaded
// through ES's API) of a game that has one, the placeholder for a system and for a game without
// a picture; the details come from ES's list. Everything published passes the strict discovery
// validator.
//
// What "held for the settle time" means is the daemon's view: the test measures when each
// wrapper has handed its pick over, and a pick followed by the next within 100 ms must never be
// published, one followed by nothing for settle + 300 ms must be; on a loaded machine (a gap in
// between) either is right.
func TestSelectionFeed(t *testing.T) {
	cabinettest.Long(t, "200 selections through the wrappers, on both brokers")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind))
		var capture *subCapture
		if kind != cabinettest.Embedded {
			capture = startSubCapture(t, r.broker)
		}
		d := r.startOnline()
		r.obs.AwaitLatest(r.topic(haentities.SelectedGame), haentities.NoneState)
		placeholder := base64.StdEncoding.EncodeToString(artwork.Placeholder())
		r.obs.AwaitLatest(r.topic(haentities.SelectedMarquee), placeholder)
		// The daemon's names cache holds ES's list (its first pass at start).
		d.waitLog("game names refreshed", 20*time.Second)

		pool := plainGames(r.cab.Library)
		zelda, smw, dkong := findGame(t, pool, "The Legend of Zelda"), findGame(t, pool, "Super Mario World"), findGame(t, pool, "Donkey Kong")
		wheel := uploadWheel(t, r, smw)
		r.cab.ES.Start() // ES's start: the cabinet event, and the system it shows
		r.waitScripts()
		const pause = 900 * time.Millisecond // well past the 300 ms settle time
		time.Sleep(pause)

		// Each pick is fired as ES fires it (sh -c, the installed wrapper) and the next one only
		// once its wrapper has handed it over: they reach the daemon in this order, and the test
		// knows when.
		var picks []pick
		fire := func(key string, sel func() error) {
			t.Helper()
			if err := sel(); err != nil {
				t.Fatal(err)
			}
			r.waitScripts()
			picks = append(picks, pick{key: key, at: time.Now()})
		}
		game := func(g library.Game) {
			fire(g.Path, func() error { return r.cab.ES.SelectGame(g.System, g.ID) })
		}
		from := r.obs.Mark()
		start := time.Now()
		const bursts, steps = 8, 25
		// Where each scroll stops: Zelda (a marquee), SMW (a wheel), SMW again (a scroll that
		// comes back: nothing new), the snes system, Donkey Kong (no picture), then any.
		stops := []string{zelda.Path, smw.Path, smw.Path, "system snes", dkong.Path}
		var last library.Game
		for b := 0; b < bursts; b++ {
			for i := 0; i < steps-1; i++ {
				game(pool[(b*steps+i)%len(pool)])
			}
			stop := pool[(b*steps+steps)%len(pool)].Path
			if b < len(stops) {
				stop = stops[b]
			}
			if sys, ok := strings.CutPrefix(stop, "system "); ok {
				fire(stop, func() error { return r.cab.ES.SelectSystem(sys) })
			} else {
				for _, g := range pool {
					if g.Path == stop {
						game(g)
						last = g
						break
					}
				}
			}
			if b == bursts/2 {
				// The screensaver shows games for a while (each long enough to settle), then the
				// player comes back: ES says nothing of the cursor then.
				time.Sleep(pause)
				if err := r.cab.ES.StartScreensaver(fakees.ScreensaverVideo); err != nil {
					t.Fatal(err)
				}
				r.waitScripts()
				for _, g := range pool[len(pool)-4:] {
					time.Sleep(500 * time.Millisecond)
					if err := r.cab.ES.ScreensaverShow(g.System, g.ID); err != nil {
						t.Fatal(err)
					}
					r.waitScripts()
				}
				time.Sleep(500 * time.Millisecond)
				r.cab.ES.StopScreensaver()
				r.waitScripts()
			}
			time.Sleep(pause)
		}
		t.Logf("%s: %d selections fired in %v (with the screensaver's %v)", kind, len(picks),
			time.Since(start).Round(time.Millisecond), 5*500*time.Millisecond+pause)

		// The last game is launched: the feed holds it while it runs, then the player's pick
		// (the same game, from the cursor) again.
		ctx := context.Background()
		if err := r.cab.ES.Launch(last.System, last.ID); err != nil {
			t.Fatal(err)
		}
		if err := r.cab.WaitRunning(ctx); err != nil {
			t.Fatal(err)
		}
		cabinettest.Await(t, "the running game held", r.obs.Changed, func() (bool, string) {
			got := r.selections(from)
			return len(got) > 0 && got[len(got)-1].Source == "playing", fmt.Sprintf("%d selections", len(got))
		})
		time.Sleep(time.Second) // a second of play: a session, not a synchronisation
		if err := simulator.EndGame(ctx, r.cab); err != nil {
			t.Fatal(err)
		}
		cabinettest.Await(t, "the session logged, the player's pick back", r.obs.Changed, func() (bool, string) {
			n := len(r.sessionEvents(from, "session_end"))
			got := r.selections(from)
			return n == 1 && len(got) > 0 && got[len(got)-1].Source == "es", fmt.Sprintf("%d session_end", n)
		})
		time.Sleep(2 * pause) // anything more would come now
		got := r.selections(from)

		// The player's picks, in order, then the game held while it ran and the pick after it.
		var keys []string
		for _, s := range got {
			keys = append(keys, s.Source+" "+s.key())
		}
		n := len(keys)
		if n < 2 || keys[n-2] != "playing "+last.Path || keys[n-1] != "es "+last.Path {
			t.Errorf("published last %q, want the running game %s held, then the player's pick", keys[max(n-2, 0):], last.Path)
		} else {
			keys = keys[:n-2]
		}
		if msg := checkSettled(picks, keys, selection.DefaultSettle); msg != "" {
			var held []string
			for i, p := range picks {
				if i+1 == len(picks) || picks[i+1].at.Sub(p.at) >= 100*time.Millisecond {
					held = append(held, fmt.Sprintf("%d %s", i, p.key))
				}
			}
			t.Errorf("%s\npublished (%d):\n%s\npicks that held 100 ms or more:\n%s", msg, len(keys), lines(keys), lines(held))
		}
		for _, k := range keys {
			if strings.HasPrefix(k, "screensaver ") {
				t.Errorf("published the screensaver's %s", k)
			}
		}

		// selected_game changes with each settled game (an unchanged name is not sent again).
		changes, prev := 0, haentities.NoneState
		for _, s := range got {
			name := s.Game
			if name == "" {
				name = haentities.NoneState
			}
			if name != prev {
				changes++
			}
			prev = name
		}
		if n := len(r.states(from, haentities.SelectedGame)); n != changes {
			t.Errorf("%d selected_game states, want %d (one per settled selection that changed it)", n, changes)
		}

		// The pictures: Zelda's marquee, SMW's wheel (not its image), the placeholder for the
		// snes system and for Donkey Kong (no picture).
		pics := r.marquees(from)
		check := func(key, want, what string) {
			t.Helper()
			p, ok := pics[key]
			switch {
			case !ok:
				t.Errorf("%s: not published", key)
			case want == "" && p == placeholder:
				t.Errorf("%s: the placeholder, want %s", key, what)
			case want != "" && p != want:
				t.Errorf("%s: not %s", key, what)
			}
		}
		check(zelda.Path, "", "its marquee")
		check(smw.Path, base64.StdEncoding.EncodeToString(wheel), "its wheel")
		check("system snes", placeholder, "the placeholder")
		check(dkong.Path, placeholder, "the placeholder")
		for _, s := range got {
			switch s.key() {
			case zelda.Path:
				if s.Game != "The Legend of Zelda" || s.SystemName != "Nintendo Entertainment System" || !strings.HasSuffix(s.Image, "-marquee.png") {
					t.Errorf("Zelda published as %+v", s)
				}
			case "system snes":
				if s.SystemName != "Super Nintendo Entertainment System" || s.Game != "" {
					t.Errorf("the snes system published as %+v", s)
				}
			}
		}
		var attrs struct {
			Genre, Players, Source string
			Year                   int
		}
		found := false
		for _, a := range r.states(from, haentities.SelectedGame+"/attributes") {
			if json.Unmarshal([]byte(a), &attrs) == nil && attrs.Genre == "Action-Adventure" {
				found = attrs.Year == 1986 && attrs.Players == "1" && attrs.Source == "es"
			}
		}
		if !found {
			t.Errorf("Zelda's attributes: %+v", attrs)
		}

		d.term()
		if kind == cabinettest.Embedded {
			cabinettest.ValidateCapture(t, "selection feed on "+string(kind), r.broker.Embedded().Capture())
		} else {
			cabinettest.ValidateCapture(t, "selection feed on "+string(kind), capture.stop(t))
		}
	})
}

// pick is one selection the test fired: its key (selectedJSON.key) and when its wrapper had
// handed it over.
type pick struct {
	key string
	at  time.Time
}

// checkSettled says what is wrong with published (the sources and keys of the selections
// published, in order) for picks fired at their times, "" when nothing: a pick the next one
// followed within 100 ms must not be published, one that held settle + 300 ms must be, unless
// it is the selection published already (which is never published twice in a row); one in
// between may be. The screensaver's picks are not among picks: published, they match nothing.
// Picks repeat games, so this is a search for one way to match them, not a greedy walk.
func checkSettled(picks []pick, published []string, settle time.Duration) string {
	held := func(i int) time.Duration {
		if i+1 < len(picks) {
			return picks[i+1].at.Sub(picks[i].at)
		}
		return time.Hour
	}
	type state struct{ i, j, last int }
	memo := map[state]bool{}
	far := 0 // the most published entries any way matched, for the message
	var match func(i, j, last int) bool
	match = func(i, j, last int) bool {
		far = max(far, j)
		if i == len(picks) {
			return j == len(published)
		}
		k := state{i, j, last}
		if v, ok := memo[k]; ok {
			return v
		}
		p, shown := picks[i], ""
		if last >= 0 {
			shown = picks[last].key
		}
		must, may := held(i) >= settle+300*time.Millisecond, held(i) >= 100*time.Millisecond
		ok := false
		if may && p.key != shown && j < len(published) && published[j] == "es "+p.key {
			ok = match(i+1, j+1, i)
		}
		if !ok && (!must || p.key == shown) {
			ok = match(i+1, j, last)
		}
		memo[k] = ok
		return ok
	}
	if match(0, 0, -1) {
		return ""
	}
	next := "(nothing more)"
	if far < len(published) {
		next = published[far]
	}
	return fmt.Sprintf("no way to match the published selections to the picks that held: %d of %d matched at most, then %s", far, len(published), next)
}

// marquees are the pictures published with each selection since from, by selection key (the
// last one published with it; a selection whose picture did not change keeps the one before).
func (r *rig) marquees(from int) map[string]string {
	out := map[string]string{}
	pending, current := "", ""
	for i, m := range r.obs.Since(0) {
		switch m.Topic {
		case r.topic(haentities.SelectedTopic):
			if pending != "" {
				out[pending] = current
			}
			var s selectedJSON
			if pending = ""; i >= from && json.Unmarshal([]byte(m.Payload), &s) == nil {
				pending = s.key()
			}
		case r.topic(haentities.SelectedMarquee):
			current = m.Payload
		}
	}
	if pending != "" {
		out[pending] = current
	}
	return out
}

// selections are the payloads of batocera/<id>/selected since from, in order.
func (r *rig) selections(from int) []selectedJSON {
	var out []selectedJSON
	for _, p := range r.states(from, haentities.SelectedTopic) {
		var s selectedJSON
		if json.Unmarshal([]byte(p), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// states are the payloads published on the state topic of entity since from, in order.
func (r *rig) states(from int, entity string) []string {
	var out []string
	for _, m := range r.obs.Since(from) {
		if m.Topic == r.topic(entity) {
			out = append(out, m.Payload)
		}
	}
	return out
}

// uploadWheel gives g a wheel through ES's API (POST …/media/wheel, as a scraper or a user
// would) and returns the picture Cabinet makes of it.
func uploadWheel(t *testing.T, r *rig, g library.Game) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 300, 100))
	for y := 0; y < 100; y++ {
		for x := 0; x < 300; x++ {
			img.Set(x, y, color.RGBA{20, 200, 60, 255})
		}
	}
	return uploadMedia(t, r, g, "wheel", img)
}

// uploadMedia gives g the picture img in ES's media slot kind through ES's API and returns the
// picture Cabinet makes of it.
func uploadMedia(t *testing.T, r *rig, g library.Game, kind string, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	png.Encode(&b, img)
	url := fmt.Sprintf("%s/systems/%s/games/%s/media/%s", r.cab.ESURL(), g.System, g.ID, kind)
	resp, err := http.Post(url, "image/png", bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("upload the %s: %s", kind, resp.Status)
	}
	want, err := artwork.Encode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// subCapture is `mosquitto_sub -V 5 --retain-as-published -F '%r %t %p' -t '#'` on a real
// Mosquitto, the capture validate_discovery.py reads.
type subCapture struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
}

func startSubCapture(t *testing.T, b *testBroker) *subCapture {
	t.Helper()
	if _, err := exec.LookPath("mosquitto_sub"); err != nil {
		t.Skip("mosquitto_sub not installed (Debian: mosquitto-clients)")
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(b.URL(), "tcp://"), ":")
	c := &subCapture{done: make(chan struct{})}
	c.cmd = exec.Command("mosquitto_sub", "-h", host, "-p", port, "-V", "5", "--retain-as-published", "-q", "1",
		"-F", "%r %t %p", "-t", "#")
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start mosquitto_sub: %v", err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill(); <-c.done })
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			c.mu.Lock()
			c.buf.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
		}
	}()
	// Subscribed once it sees a message of ours.
	client := b.Dial(t)
	defer client.Disconnect(0)
	cabinettest.Eventually(cabinettest.Deadline, nil, func() (bool, string) {
		client.Publish("e2e/capture", 1, false, "ready").Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		return strings.Contains(c.buf.String(), "e2e/capture"), "mosquitto_sub not subscribed yet"
	})
	return c
}

// stop ends the capture once everything published so far is in it, and returns it.
func (c *subCapture) stop(t *testing.T) []byte {
	t.Helper()
	time.Sleep(500 * time.Millisecond) // QoS 1 deliveries in flight
	c.cmd.Process.Kill()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	var out bytes.Buffer
	for _, l := range strings.SplitAfter(c.buf.String(), "\n") {
		if !strings.Contains(l, " e2e/") {
			out.WriteString(l)
		}
	}
	return out.Bytes()
}

// TestCheckSettled holds checkSettled to its rules on made-up picks.
func TestCheckSettled(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// a, b, a within a scroll, a held; c held for a while only; a held.
	picks := []pick{{"a", at(0)}, {"b", at(10)}, {"a", at(20)}, {"c", at(1000)}, {"a", at(1200)}, {"a", at(3000)}}
	for _, tc := range []struct {
		published []string
		ok        bool
	}{
		{[]string{"es a", "es a"}, false},          // the same twice in a row
		{[]string{"es a"}, true},                   // c not published, a again: nothing
		{[]string{"es a", "es c", "es a"}, true},   // c published too
		{[]string{"es b", "es a"}, false},          // a step of the scroll
		{[]string{"es c", "es a"}, false},          // the first stop missing
		{[]string{"es a", "screensaver x"}, false}, // something else
		{[]string{"es a", "es c", "es a", "es a"}, false},
	} {
		if got := checkSettled(picks, tc.published, 300*time.Millisecond); (got == "") != tc.ok {
			t.Errorf("checkSettled(%q) = %q, want ok %v", tc.published, got, tc.ok)
		}
	}
}
