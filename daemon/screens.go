package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/journal"
)

// The second screens (package events): d.events is the hub GET /events
// streams and the marquee page follows; d.marquees serves its pictures.
//
// What publishes into d.events (Publish never blocks and fails only for a
// bad kind or oversized data, so a caller may ignore its error):
//   - now_playing and session: screenEvents below, from every apply of the
//     engine, next to the MQTT now_playing and session_start/session_end;
//   - selection: the debounced selection feed, once the cursor settles,
//     through d.screenSelection (which names the picture and keeps the
//     JPEG the feed encoded already, so the page's request does not ask
//     ES again);
//   - achievement: screenEvents too, as event.batocera_achievement is
//     published (only with RetroAchievements on).

// marqueeKey is the picture key of a game (events.ImageURL): its system
// and ES's id of it (es.GameID of its path); "" when there is none.
func marqueeKey(system, gameID string) string {
	if system == "" || gameID == "" || strings.Contains(system, "/") || strings.Contains(gameID, "/") {
		return ""
	}
	key := system + "/" + gameID
	if !events.ValidKey(key) {
		return ""
	}
	return key
}

// screenSelection publishes a settled selection to the second screens:
// sel with its Image set to the picture of the game (system, gameID; a
// system alone has no picture), whose bytes are jpeg (package artwork's;
// nil: it has none). A zero At is now.
func (d *Daemon) screenSelection(system, gameID string, sel events.Selection, jpeg []byte) {
	sel.Image = ""
	if key := marqueeKey(system, gameID); key != "" {
		d.marquees.put(key, jpeg)
		if jpeg != nil {
			sel.Image = events.ImageURL(key)
		}
	}
	if sel.At == "" {
		sel.At = d.clock.Now().Format(time.RFC3339)
	}
	d.publishScreen(events.KindSelection, sel)
}

// screens is what screenEvents remembers between applies: the last now_playing published (At
// cleared; nil before the first) and its picture's key, written under the engine's lock and read
// outside it for cabinet://now-playing.
type screens struct {
	now atomic.Pointer[playingGame]
}

type playingGame struct {
	np  events.NowPlaying
	key string // marqueeKey
}

// playingNow is cabinet://now-playing's source (tools.Playing): what the screens were last told.
type playingNow struct{ d *Daemon }

func (p playingNow) NowPlaying() events.NowPlaying {
	if g := p.d.screens.now.Load(); g != nil {
		return g.np
	}
	return events.NowPlaying{}
}

func (p playingNow) Artwork(ctx context.Context) ([]byte, string, error) {
	g := p.d.screens.now.Load()
	if g == nil || !g.np.Playing || g.key == "" {
		return nil, "", nil
	}
	data, typ, err := p.d.marquees.Marquee(ctx, g.key)
	if errors.Is(err, events.ErrNoPicture) {
		return nil, "", nil
	}
	return data, typ, err
}

// screenEvents publishes an apply's changes to the second screens:
// now_playing when the game running changed (the first apply publishes
// the state at start, so the hub always has one), session_start and
// session_end as MQTT gets them. The engine calls it under its lock, in
// apply order.
func (d *Daemon) screenEvents(res journal.Result, rules journal.Rules) {
	now := d.clock.Now().Format(time.RFC3339)
	np := nowPlaying(res.Snapshot)
	var changed []string
	if prev := d.screens.now.Load(); prev == nil || np != prev.np {
		var key string
		if res.Snapshot.Playing {
			key = marqueeKey(res.Snapshot.Current.System, es.GameID(res.Snapshot.Current.Rom))
		}
		d.screens.now.Store(&playingGame{np: np, key: key})
		changed = append(changed, tools.ResourceNowPlaying, tools.ResourceArtwork, tools.ResourceStatus)
		np.At = now
		d.publishScreen(events.KindNowPlaying, np)
	}
	for _, ev := range res.Events {
		switch ev.Type {
		case haentities.EventSessionStart:
			d.publishScreen(events.KindSession, sessionEvent(haentities.EventSessionStart, ev.Session, now))
		case haentities.EventAchievementUnlocked:
			// As Home Assistant gets it: only with RetroAchievements on (Settings.Achievements).
			if rules.Settings.Achievements {
				d.publishScreen(events.KindAchievement, achievementEvent(ev.Achievement, now))
			}
		}
	}
	for _, s := range res.Logged {
		d.publishScreen(events.KindSession, sessionEvent(haentities.EventSessionEnd, s, now))
	}
	if len(res.Logged) > 0 {
		changed = append(changed, tools.ResourcePlayedToday, tools.ResourcePlayedWeek)
	}
	if len(changed) > 0 {
		d.resourcesChanged(changed...)
	}
}

func (d *Daemon) publishScreen(kind string, data any) {
	if err := d.events.Publish(kind, data); err != nil {
		d.log.Warn().Err(err).Msg("second screens: event not published")
	}
}

// screenText cleans a name or path for the screens (they show it as text).
func screenText(s string) string { return untrusted.Clean(s, haentities.MaxStateRunes) }

// sessionGame is a session's name, else its ROM's file name.
func sessionGame(s haentities.Session) string {
	if n := screenText(s.Game); n != "" {
		return n
	}
	if s.Rom != "" {
		return screenText(path.Base(s.Rom))
	}
	return ""
}

func nowPlaying(snap haentities.Snapshot) events.NowPlaying {
	if !snap.Playing {
		return events.NowPlaying{}
	}
	s := snap.Current
	np := events.NowPlaying{Playing: true, Game: sessionGame(s), System: screenText(s.System), SystemName: screenText(s.SystemName),
		Rom: screenText(s.Rom), SessionID: s.ID}
	if s.Rom != "" {
		np.Image = events.ImageURL(marqueeKey(s.System, es.GameID(s.Rom)))
	}
	if !s.Started.IsZero() {
		np.Started = s.Started.Format(time.RFC3339)
	}
	return np
}

func achievementEvent(a haentities.Achievement, at string) events.Achievement {
	return events.Achievement{ID: a.ID, Title: haentities.CleanAchievementTitle(a.Title),
		Description: haentities.CleanAchievementDescription(a.Description), Hardcore: a.Hardcore,
		Game: screenText(a.Game), System: screenText(a.System), SessionID: a.SessionID, At: at}
}

func sessionEvent(typ string, s haentities.Session, at string) events.Session {
	e := events.Session{Type: typ, Game: sessionGame(s), System: screenText(s.System), Rom: screenText(s.Rom), SessionID: s.ID, At: at}
	if !s.Started.IsZero() {
		e.Started = s.Started.Format(time.RFC3339)
	}
	if typ == haentities.EventSessionEnd {
		if !s.Ended.IsZero() {
			e.Ended = s.Ended.Format(time.RFC3339)
		}
		secs := int64(s.Duration / time.Second)
		e.DurationS = &secs
	}
	return e
}

// marquees are the marquee pictures (events.Pictures): a game's marquee,
// else its box art, else its image, as ES names them, encoded by package
// artwork (a JPEG of at most 512 px). The last few are kept a moment, so a
// room of screens asking at once costs ES one look-up.
type marquees struct {
	// game reads a game as ES lists it, with its media paths; root is
	// cabinet.paths.root, under which ES's paths are read.
	game func(ctx context.Context, system, id string) (es.Game, error)
	root func() string
	now  func() time.Time

	mu   sync.Mutex // one look-up at a time
	kept []keptMarquee
}

type keptMarquee struct {
	key  string
	data []byte // nil: the game has none, or err
	err  error  // ES failed: the screens waiting behind are answered at once
	at   time.Time
}

const (
	marqueesKept = 16
	marqueeLife  = 2 * time.Minute  // a picture's bytes
	noneLife     = 30 * time.Second // "it has none" (a scrape may add one)
	failedLife   = 5 * time.Second  // ES failed to answer
)

func newMarquees(d *Daemon) *marquees {
	return &marquees{
		game: func(ctx context.Context, system, id string) (es.Game, error) {
			return d.es().GameLocal(ctx, system, id)
		},
		root: func() string { return d.config().Tools.Root },
		now:  d.clock.Now,
	}
}

// put keeps a picture the selection feed encoded already (a JPEG of
// package artwork), so the page's request for key is answered from it.
func (m *marquees) put(key string, jpeg []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keepLocked(key, jpeg, nil)
}

func (m *marquees) keepLocked(key string, data []byte, err error) {
	m.kept = append(m.kept, keptMarquee{key: key, data: data, err: err, at: m.now()})
	if len(m.kept) > marqueesKept {
		m.kept = append(m.kept[:0], m.kept[len(m.kept)-marqueesKept:]...)
	}
}

// Marquee is key's picture (events.Pictures).
func (m *marquees) Marquee(ctx context.Context, key string) ([]byte, string, error) {
	system, id, ok := strings.Cut(key, "/")
	if !ok || system == "" || id == "" {
		return nil, "", fmt.Errorf("%q: %w", key, events.ErrNoPicture)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for i := len(m.kept) - 1; i >= 0; i-- {
		k := m.kept[i]
		if k.key != key {
			continue
		}
		life := marqueeLife
		switch {
		case k.err != nil:
			life = failedLife
		case k.data == nil:
			life = noneLife
		}
		if age := now.Sub(k.at); age >= 0 && age < life {
			switch {
			case k.err != nil:
				return nil, "", k.err
			case k.data == nil:
				return nil, "", events.ErrNoPicture
			}
			return k.data, artwork.ContentType, nil
		}
		break
	}
	g, err := m.game(ctx, system, id)
	if errors.Is(err, es.ErrNotFound) {
		m.keepLocked(key, nil, nil)
		return nil, "", fmt.Errorf("ES does not list it: %w", events.ErrNoPicture)
	}
	if err != nil {
		if ctx.Err() == nil { // not this request's own end
			m.keepLocked(key, nil, err)
		}
		return nil, "", err
	}
	root := m.root()
	var failed error
	for _, f := range []string{g.Marquee, g.Thumbnail, g.Image} {
		if f == "" || !filepath.IsAbs(f) {
			continue
		}
		if root != "" {
			f = filepath.Join(root, f)
		}
		b, err := artwork.EncodeFile(f)
		if err == nil {
			m.keepLocked(key, b, nil)
			return b, artwork.ContentType, nil
		}
		if failed == nil && !errors.Is(err, fs.ErrNotExist) {
			failed = err
		}
	}
	m.keepLocked(key, nil, nil)
	if failed != nil {
		return nil, "", fmt.Errorf("%w: %v", events.ErrNoPicture, failed)
	}
	return nil, "", events.ErrNoPicture
}
