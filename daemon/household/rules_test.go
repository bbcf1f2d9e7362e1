package household

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		key, value string
		ok         bool
	}{
		{"enabled", "1", true}, {"enabled", "yes", true}, {"enabled", "2", false},
		{"minutes.daily", "", true}, {"minutes.daily", "0", true}, {"minutes.daily", "1440", true},
		{"minutes.daily", "1441", false}, {"minutes.daily", "-1", false}, {"minutes.daily", "+5", false},
		{"minutes.daily", "1e2", false}, {"minutes.daily", " 90 ", true},
		{"minutes.mon", "30", true}, {"minutes.sun", "0", true}, {"minutes.xyz", "30", false},
		{"session_minutes", "0", false}, {"session_minutes", "45", true},
		{"bedtime", "21:00-07:00", true}, {"bedtime", "9:30-10:00", true}, {"bedtime", "21:00-21:00", false},
		{"bedtime", "24:00-07:00", false}, {"bedtime", "21:00", false}, {"bedtime", "21:60-07:00", false},
		{"bedtime", "-1:00-07:00", false},
		{"warn_at", "15,5,1", true}, {"warn_at", "", true}, {"warn_at", "0", false}, {"warn_at", "121", false},
		{"warn_at", "1,2,3,4,5,6,7", false}, {"warn_at", "5,,1", false},
		{"at_limit", "save_quit", true}, {"at_limit", "warn_only", true}, {"at_limit", "shutdown", false},
		{"min_start_minutes", "0", true}, {"min_start_minutes", "61", false},
		{"profile.anna.minutes.daily", "60", true}, {"profile.anna.bedtime", "20:00-07:00", true},
		{"profile.anna.enabled", "1", false}, {"profile.Anna.minutes.daily", "60", false},
		{"profile.anna.minutes.daily", "x", false}, {"profile..minutes.daily", "60", false},
		{"nonsense", "1", false},
	}
	for _, c := range cases {
		err := Check(Prefix+c.key, c.value)
		if (err == nil) != c.ok {
			t.Errorf("%s=%q: error %v, want ok %v", c.key, c.value, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "cabinet.household.") {
			t.Errorf("%s: the error %q does not name the key", c.key, err)
		}
	}
}

func TestParse(t *testing.T) {
	r := rulesOf(t, "enabled", "1", "minutes.daily", "90", "minutes.sat", "0", "minutes.sun", "120",
		"session_minutes", "45", "bedtime", "21:30-07:15", "warn_at", "1,15,5,5", "at_limit", "quit", "min_start_minutes", "3")
	if !r.Enabled || r.DayLimit(time.Monday) != 90 || r.DayLimit(time.Saturday) != 0 || r.DayLimit(time.Sunday) != 120 ||
		r.Session != 45 || *r.Bedtime != (Window{21*60 + 30, 7*60 + 15}) || !reflect.DeepEqual(r.WarnAt, []int{15, 5, 1}) ||
		r.AtLimit != Quit || r.MinStart != 3 {
		t.Fatalf("%+v", r)
	}
	back, errs := Parse(r.Values())
	if len(errs) > 0 || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip: %+v %v", back, errs)
	}
	// Bad values are each reported; their defaults stay.
	r, errs = Parse(map[string]string{Prefix + "minutes.daily": "lots", Prefix + "bedtime": "late", Prefix + "enabled": "1"})
	if len(errs) != 2 || !r.Enabled || r.Daily != -1 || r.Bedtime != nil {
		t.Fatalf("%+v %v", r, errs)
	}
}

func TestWindow(t *testing.T) {
	w, _ := ParseWindow("21:00-07:00")
	for m, want := range map[int]bool{0: true, 6*60 + 59: true, 7 * 60: false, 12 * 60: false, 21 * 60: true, 23*60 + 59: true} {
		if w.contains(m) != want {
			t.Errorf("21:00-07:00 at minute %d: %v", m, !want)
		}
	}
	w, _ = ParseWindow("13:00-14:00")
	if !w.contains(13*60) || w.contains(14*60) || w.contains(12*60) {
		t.Error("13:00-14:00")
	}
}

// FuzzRuleKeys: any key and value is accepted or refused with an error
// naming the key, never a panic; what is accepted survives a round trip.
func FuzzRuleKeys(f *testing.F) {
	for _, k := range Keys() {
		f.Add(k.Name, k.Default)
	}
	f.Add(Prefix+"bedtime", "23:59-00:00")
	f.Add(Prefix+"warn_at", "120,1")
	f.Add(Prefix+"profile.kid_1.minutes.sun", "45")
	f.Add(Prefix+"minutes.daily", "\x00\u202e90")
	f.Fuzz(func(t *testing.T, key, value string) {
		err := Check(key, value)
		if err != nil {
			if !strings.Contains(err.Error(), "cabinet.household") && !strings.Contains(err.Error(), "over 256 bytes") {
				t.Fatalf("error %q does not name the key", err)
			}
			return
		}
		if strings.HasPrefix(key, ProfilePrefix) {
			return
		}
		r, errs := Parse(map[string]string{key: value})
		if len(errs) > 0 {
			t.Fatalf("Check accepted %s=%q, Parse refused: %v", key, value, errs)
		}
		back, errs := Parse(r.Values())
		if len(errs) > 0 || !reflect.DeepEqual(back, r) {
			t.Fatalf("%s=%q: round trip %+v -> %+v (%v)", key, value, r, back, errs)
		}
	})
}
