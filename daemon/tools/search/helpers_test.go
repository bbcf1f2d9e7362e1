package search

import (
	"strconv"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// fixtureIndex indexes library.Fixture the way the tools package does:
// cleaned names, hidden games left out.
func fixtureIndex(t testing.TB) *Index {
	t.Helper()
	return indexOf(library.Fixture(""))
}

func indexOf(l *library.Library) *Index {
	b := NewBuilder(l.Len())
	for _, g := range l.AllGames() {
		if g.Hidden() {
			continue
		}
		b.Add(docOf(g))
	}
	return b.Index()
}

func docOf(g library.Game) Doc {
	d := Doc{System: g.System, ID: g.ID, Name: untrusted.Clean(g.Name, 200),
		Genre: untrusted.Clean(g.Value("genre"), 100), Players: untrusted.Clean(g.Value("players"), 20),
		Favorite: g.Favorite(), PlayCount: g.PlayCount(), PlayTime: int64(g.GameTime())}
	if rd := g.Value("releasedate"); len(rd) >= 4 {
		d.Year, _ = strconv.Atoi(rd[:4])
	}
	if lp, err := time.ParseInLocation("20060102T150405", g.Value("lastplayed"), time.UTC); err == nil {
		d.LastPlayed = lp
	}
	return d
}
