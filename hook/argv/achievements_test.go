package argv

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

func TestParseUnlock(t *testing.T) {
	big := strings.Repeat("é", 600<<10) // 1.2 MB: more than any argv word
	tests := []struct {
		name string
		args []string
		want tracker.Unlock
		src  tracker.Source
	}{
		{"the wrapper's argv", []string{"--source", "configgen", "achievements", "12345", "First Blood", "Defeat the first boss"},
			tracker.Unlock{ID: 12345, Title: "First Blood", Description: "Defeat the first boss"}, tracker.SourceConfiggen},
		{"by hand, es source", []string{"achievements", "7", "t", "d"}, tracker.Unlock{ID: 7, Title: "t", Description: "d"}, tracker.SourceES},
		{"quotes and $words kept as given", []string{"achievements", "1", `Say "Hi" $HOME \n`, `it's`},
			tracker.Unlock{ID: 1, Title: `Say "Hi" $HOME \n`, Description: "it's"}, tracker.SourceES},
		{"newlines, tabs and controls cleaned", []string{"achievements", "2", "two\nlines\there", "\x1b[31mred\x1b[0m\u0007"},
			tracker.Unlock{ID: 2, Title: "two lines here", Description: "[31mred[0m"}, tracker.SourceES},
		{"bidi and zero-width removed", []string{"achievements", "3", "evil\u202egnp.exe", "z\u200bw"},
			tracker.Unlock{ID: 3, Title: "evilgnp.exe", Description: "zw"}, tracker.SourceES},
		{"not UTF-8", []string{"achievements", "4", "\xff\xfe latin\xe9", "ok"},
			tracker.Unlock{ID: 4, Title: "\uFFFD latin\uFFFD", Description: "ok"}, tracker.SourceES},
		{"missing arguments", []string{"achievements", "5"}, tracker.Unlock{ID: 5}, tracker.SourceES},
		{"leading zeros and spaces", []string{"achievements", " 0042 ", "t", ""}, tracker.Unlock{ID: 42, Title: "t"}, tracker.SourceES},
		{"largest id", []string{"achievements", "4294967295", "t", "d"}, tracker.Unlock{ID: 4294967295, Title: "t", Description: "d"}, tracker.SourceES},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.args, st)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if got.Kind != tracker.KindAchievement || got.Unlock != tt.want || got.Source != tt.src {
				t.Errorf("Parse(%q)\n got %s %+v from %s\nwant achievement %+v from %s", tt.args, got.Kind, got.Unlock, got.Source, tt.want, tt.src)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("an invalid event: %v", err)
			}
		})
	}
	t.Run("a 1 MB title is cut, not refused", func(t *testing.T) {
		got, err := Parse([]string{"achievements", "9", big, big}, st)
		if err != nil {
			t.Fatal(err)
		}
		checkUnlockText(t, got.Unlock)
		if n := utf8.RuneCountInString(got.Unlock.Title); n != haentities.MaxAchievementTitleRunes {
			t.Errorf("title of %d runes, want the cap %d", n, haentities.MaxAchievementTitleRunes)
		}
	})
}

func TestParseUnlockRefuses(t *testing.T) {
	for _, id := range []string{"", "abc", "-1", "+1", "1.5", "0x10", "4294967296", "1 2", strings.Repeat("9", 40)} {
		if _, err := Parse([]string{"--source", "configgen", "achievements", id, "t", "d"}, st); err == nil || !strings.Contains(err.Error(), "achievement id") {
			t.Errorf("id %q: %v, want a refused id", id, err)
		}
	}
}

// checkUnlockText: what reaches HA, MCP or the store is one clean line within its caps.
func checkUnlockText(t *testing.T, u tracker.Unlock) {
	t.Helper()
	for _, f := range []struct {
		what, s string
		max     int
	}{{"title", u.Title, haentities.MaxAchievementTitleRunes}, {"description", u.Description, haentities.MaxAchievementDescRunes}} {
		if !utf8.ValidString(f.s) || utf8.RuneCountInString(f.s) > f.max {
			t.Errorf("%s: %d runes, valid UTF-8 %v", f.what, utf8.RuneCountInString(f.s), utf8.ValidString(f.s))
		}
		for _, c := range f.s {
			if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
				t.Errorf("%s holds %U", f.what, c)
			}
		}
	}
}

func FuzzParseUnlock(f *testing.F) {
	f.Add("12345", "First Blood", "Defeat the first boss", true)
	f.Add("1", `Say "Hi" $HOME`, "two\nlines\u202e", false)
	f.Add("0042", "\xff\xfe latin\xe9", "\x1b[31m", true)
	f.Add("", "", "", false)
	f.Fuzz(func(t *testing.T, id, title, desc string, configgen bool) {
		args := []string{"achievements", id, title, desc}
		if configgen {
			args = append([]string{"--source", "configgen"}, args...)
		}
		ev, err := Parse(args, st)
		if err != nil {
			if !strings.Contains(err.Error(), "achievement id") {
				t.Fatalf("Parse(%q) refused for another reason than its id: %v", args, err)
			}
			return
		}
		if verr := ev.Validate(); verr != nil {
			t.Fatalf("Parse(%q) accepted an event the tracker refuses: %v", args, verr)
		}
		checkUnlockText(t, ev.Unlock)
		if again := ev.Normalize(); again != ev {
			t.Fatalf("Normalize is not idempotent: %+v then %+v", ev.Unlock, again.Unlock)
		}
	})
}
