package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// unlock is one achievements wrapper run: its argv, or a title too long for
// any argv (it is then given to the wrapper as "$2" of a sourced run, as a
// shell holds it).
type unlock struct {
	id, title, desc string
	sourced         bool
}

// hostileUnlocks are what RetroArch's unescaped "%s" in sh -c can hand the
// wrapper, and worse: quotes, $words, a newline and bidi controls, bytes
// that are not UTF-8, a title of 100 KiB (an argv word may hold 128 KiB) and
// one of 1 MiB (no argv can: execve refuses it).
func hostileUnlocks() []unlock {
	big := func(n int) string {
		var b strings.Builder
		b.WriteString(`Big "quoted" $(reboot) title `)
		for b.Len() < n {
			b.WriteString("é\u202e\x01\t")
		}
		return b.String()
	}
	return []unlock{
		{id: "11", title: `Say "Hi" $HOME \ and 'quotes'`, desc: "two\nlines\twith\u202ebidi"},
		{id: "12", title: "\xff\xfe latin\xe9", desc: "\x1b[31mred\x1b[0m"},
		{id: "13", title: big(100 << 10), desc: "a long one"},
		{id: "14", title: big(1 << 20), desc: "longer than any argv", sourced: true},
	}
}

// runUnlock runs the installed achievements wrapper under dash, as
// Batocera's call_achievements_hooks.sh does (stdin a pipe it must not
// read, output discarded), and returns its wall time and pid.
func runUnlock(t *testing.T, r *rig, u unlock) (time.Duration, int) {
	t.Helper()
	dash, err := exec.LookPath("dash")
	if err != nil {
		peertest.RequirePeer(t, fmt.Errorf("dash (Batocera's /bin/sh): %w", err))
	}
	script := r.cab.Path("/userdata/system/configs/emulationstation/scripts/achievements/cabinet")
	var cmd *exec.Cmd
	if u.sourced {
		f := filepath.Join(cabinettest.TempDir(t, "title"), "title")
		if err := os.WriteFile(f, []byte(u.title), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(dash, "-c", `w=$1; t=$(cat "$2"); set -- "$3" "$t" "$4"; . "$w"`, "sh", script, f, u.id, u.desc)
	} else {
		cmd = exec.Command(dash, script, u.id, u.title, u.desc)
	}
	cmd.Env = append(os.Environ(), r.env()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	stdin.Close()
	if err != nil || len(out) > 0 {
		t.Fatalf("achievements wrapper %s: %v, output %q (want success and silence)", u.id, err, out)
	}
	return took, cmd.Process.Pid
}

// achievementEvent is the payload of the achievement event entity.
type achievementEvent struct {
	EventType   string `json:"event_type"`
	ID          uint32 `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Hardcore    bool   `json:"hardcore"`
	Game        string `json:"game"`
	System      string `json:"system"`
	SessionID   string `json:"session_id"`
}

func (r *rig) achievementEvents(from int) []achievementEvent {
	var out []achievementEvent
	for _, m := range r.obs.Since(from) {
		var e achievementEvent
		if m.Topic == r.topic(haentities.AchievementEntity) && json.Unmarshal([]byte(m.Payload), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// checkCleaned fails unless s is what Home Assistant may be given: valid
// UTF-8, one line, no control, bidi or format character, at most max runes.
func checkCleaned(t *testing.T, what, s string, max int) {
	t.Helper()
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		t.Errorf("%s: %d runes, valid UTF-8 %v (want at most %d)", what, utf8.RuneCountInString(s), utf8.ValidString(s), max)
	}
	for _, c := range s {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
			t.Errorf("%s holds %U: %.80q", what, c, s)
			break
		}
	}
}

// TestAchievementsThroughTheWrapper: with the daemon up, four hostile unlocks
// through the installed achievements wrapper under dash, during a game
// launched through ES's wrappers: each reaches Home Assistant as an
// `unlocked` event of that game and session, cleaned and capped, hardcore as
// batocera.conf sets it for the game's system; the last one is the retained
// last-achievement sensor; the session's end carries all four; the binary
// never starts; the play history answers "what did we unlock this week";
// and the whole capture passes the strict discovery validator.
func TestAchievementsThroughTheWrapper(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		tb := startBroker(t, kind)
		capture := captureOf(t, tb)
		r := newRig(t, tb, "global.retroachievements=1", "global.retroachievements.hardcore=0", "nes.retroachievements.hardcore=1")
		d := r.startOnline()
		from := r.obs.Mark()
		r.cab.ES.Start() // an evening: ES starts (the cabinet event), a game is launched
		r.waitScripts()
		game := r.cab.Library.Games("nes")[0]
		if err := r.cab.ES.Launch("nes", game.ID); err != nil {
			t.Fatal(err)
		}
		r.obs.AwaitMsg(from, r.topic(haentities.Playing), "ON")
		r.waitScripts()
		var session string
		cabinettest.Await(t, "session_start", r.obs.Changed, func() (bool, string) {
			starts := r.sessionEvents(from, "session_start")
			if len(starts) > 0 {
				session = starts[0].SessionID
			}
			return session != "", "not yet"
		})

		unlocks := hostileUnlocks()
		for _, u := range unlocks {
			took, _ := runUnlock(t, r, u)
			t.Logf("achievements wrapper %s (%d-byte title%s), daemon up: %v", u.id, len(u.title), map[bool]string{true: ", sourced"}[u.sourced], took)
		}
		cabinettest.Await(t, "four unlocked events", r.obs.Changed, func() (bool, string) {
			n := len(r.achievementEvents(from))
			return n == len(unlocks), fmt.Sprintf("%d so far", n)
		})
		evs := r.achievementEvents(from)
		for i, e := range evs {
			what := "unlock " + unlocks[i].id
			if fmt.Sprint(e.ID) != unlocks[i].id || e.EventType != haentities.EventAchievementUnlocked {
				t.Errorf("%s: event %+v, want id %s unlocked (in order)", what, e, unlocks[i].id)
			}
			if !e.Hardcore || e.System != "nes" || e.SessionID != session || e.Game == "" {
				t.Errorf("%s: hardcore %v, system %q, session %q, game %q: want hardcore (nes.retroachievements.hardcore=1), nes, %s and the game",
					what, e.Hardcore, e.System, e.SessionID, e.Game, session)
			}
			checkCleaned(t, what+" title", e.Title, haentities.MaxAchievementTitleRunes)
			checkCleaned(t, what+" description", e.Description, haentities.MaxAchievementDescRunes)
		}
		if !strings.HasPrefix(evs[0].Title, `Say "Hi" $HOME \ and 'quotes'`) || !strings.Contains(evs[1].Title, "latin") ||
			!strings.HasPrefix(evs[3].Title, `Big "quoted" $(reboot) title`) || !strings.HasSuffix(evs[3].Title, untrusted.Ellipsis) {
			t.Errorf("titles %q, %q, %.60q: want them as given, cleaned and cut", evs[0].Title, evs[1].Title, evs[3].Title)
		}
		r.obs.AwaitLatest(r.topic(haentities.LastAchievement), evs[3].Title)

		r.cab.ES.EndGame(0)
		r.waitScripts()
		var end map[string]any
		cabinettest.Await(t, "session_end", r.obs.Changed, func() (bool, string) {
			for _, m := range r.obs.Since(from) {
				if m.Topic == r.topic("game_session") && strings.Contains(m.Payload, `"session_end"`) {
					return json.Unmarshal([]byte(m.Payload), &end) == nil, m.Payload
				}
			}
			return false, "not yet"
		})
		var ids []string
		for _, a := range end["achievements"].([]any) {
			ids = append(ids, fmt.Sprint(a.(map[string]any)["id"]))
		}
		if end["session_id"] != session || end["achievements_count"] != 4.0 || strings.Join(ids, ",") != "11,12,13,14" {
			t.Errorf("session_end %v: want session %s with achievements 11,12,13,14", end, session)
		}
		if b, err := os.ReadFile(filepath.Join(r.state, "cabinet.log")); err == nil && strings.Contains(string(b), `"cmd":"hook"`) {
			t.Errorf("the binary ran while the daemon was up:\n%s", b)
		}
		if n := d.log.Count("inbox event taken"); n < len(unlocks) {
			t.Errorf("the daemon took %d events from its inbox, want at least the %d unlocks", n, len(unlocks))
		}
		d.term()
		cabinettest.ValidateCapture(t, "achievements on "+string(kind), capture())

		out, code, _ := runCabinet(t, r.env(), "call", "batocera_play_history", "since=7d")
		var hist struct {
			Sessions []struct {
				Achievements int `json:"achievements"`
			} `json:"sessions"`
			Totals struct {
				Achievements struct {
					Total  int `json:"total"`
					ByGame []struct {
						Count int `json:"count"`
					} `json:"by_game"`
					ByDay []struct {
						Day   string `json:"day"`
						Count int    `json:"count"`
					} `json:"by_day"`
				} `json:"achievements"`
			} `json:"totals"`
			Achievements []achievementEvent `json:"achievements"`
		}
		if err := json.Unmarshal([]byte(out), &hist); code != 0 || err != nil {
			t.Fatalf("cabinet call batocera_play_history: exit %d, %v\n%s", code, err, out)
		}
		a := hist.Totals.Achievements
		if len(hist.Sessions) != 1 || hist.Sessions[0].Achievements != 4 || a.Total != 4 || len(a.ByGame) != 1 || a.ByGame[0].Count != 4 ||
			len(a.ByDay) != 1 || a.ByDay[0].Count != 4 || len(hist.Achievements) != 4 || hist.Achievements[0].ID != 14 {
			t.Errorf("play history this week: %s", out)
		}
	})
}

// TestAchievementsWrapperDaemonDown: with no daemon the achievements wrapper
// runs the binary as the configgen source: it returns within the hook's
// budget and publishes nothing itself (no message from its MQTT client),
// whether it stored the unlock or, the store being busy, spooled it; nothing
// is lost: both unlocks reach the broker (the detached flusher and the next
// hook publish them, off RetroArch's path) and the session's end carries
// both. The capture passes the strict validator.
func TestAchievementsWrapperDaemonDown(t *testing.T) {
	t.Parallel()
	tb := startBroker(t, cabinettest.Embedded)
	r := newRig(t, tb, "global.retroachievements=1")
	from := r.obs.Mark()
	r.hook("start")
	r.hook("game-start", "/userdata/roms/snes/Hard.sfc", "Hard", "Hard Game")
	r.obs.AwaitMsg(from, r.topic(haentities.Playing), "ON")

	stored, pid1 := runUnlock(t, r, unlock{id: "21", title: "First blood", desc: "Win a fight"})
	st, err := store.Open(filepath.Join(r.state, "cabinet.db"), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	spooled, pid2 := runUnlock(t, r, unlock{id: "22", title: "Busy store", desc: "Spooled"})
	st.Close()
	t.Logf("achievements wrapper, daemon down: %v (stored), %v (store busy: spooled)", stored, spooled)
	for _, took := range []time.Duration{stored, spooled} {
		if took > 1500*time.Millisecond {
			t.Errorf("the wrapper took %v with the daemon down: want well within the hook's budget", took)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(r.state, "spool")); len(ents) == 0 {
		t.Errorf("the unlock made while the store was busy was not spooled")
	}
	r.hook("game-end")
	cabinettest.Await(t, "both unlocks published and the session ended", r.obs.Changed, func() (bool, string) {
		evs := r.achievementEvents(from)
		ends := r.sessionEvents(from, "session_end")
		return len(evs) == 2 && len(ends) == 1, fmt.Sprintf("%d unlocks, %d session ends", len(evs), len(ends))
	})
	for _, pid := range []int{pid1, pid2} {
		client := fmt.Sprintf("cabinet_%s_h%d", r.id, pid)
		for _, m := range tb.Embedded().Messages() {
			if m.ClientID == client {
				t.Errorf("the wrapper (pid %d) published %s itself: it runs on RetroArch's frame", pid, m.Topic)
			}
		}
	}
	r.waitFlushers()
	var end map[string]any
	for _, m := range r.obs.Since(from) {
		if m.Topic == r.topic("game_session") && strings.Contains(m.Payload, `"session_end"`) {
			json.Unmarshal([]byte(m.Payload), &end)
		}
	}
	if end["achievements_count"] != 2.0 {
		t.Errorf("session_end %v: want both unlocks", end)
	}
	got, _, err := func() ([]haentities.Achievement, int, error) {
		s, err := store.Open(filepath.Join(r.state, "cabinet.db"), store.Options{LockTimeout: 5 * time.Second})
		if err != nil {
			return nil, 0, err
		}
		defer s.Close()
		return s.AchievementsIn(time.Time{}, time.Time{}, 0)
	}()
	if err != nil || len(got) != 2 || !slices.ContainsFunc(got, func(a haentities.Achievement) bool { return a.ID == 22 && a.Game == "Hard Game" }) {
		t.Errorf("achievements log %+v (%v): want both, the spooled one in Hard Game's session", got, err)
	}
	cabinettest.ValidateCapture(t, "achievements without the daemon", tb.Embedded().Capture())
}

// captureOf records what the broker carries in mosquitto_sub's -F '%r %t
// %p' form, for the strict validator: the embedded broker's own record, or
// a mosquitto_sub started now (subscribed before anything is published).
func captureOf(t *testing.T, tb *testBroker) func() []byte {
	t.Helper()
	if emb := tb.Embedded(); emb != nil {
		return emb.Capture
	}
	bin, err := exec.LookPath("mosquitto_sub")
	if err != nil {
		peertest.RequirePeer(t, fmt.Errorf("mosquitto_sub (package mosquitto-clients): %w", err))
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(tb.URL(), "tcp://"), ":")
	f, err := os.Create(filepath.Join(cabinettest.TempDir(t, "capture"), "capture.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "-V", "5", "--retain-as-published", "-F", "%r %t %p", "-t", "#", "-h", host, "-p", port, "-q", "1")
	cmd.Stdout = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	t.Cleanup(stop)
	read := func() []byte { b, _ := os.ReadFile(f.Name()); return b }
	marker := "e2e/ready/" + filepath.Base(filepath.Dir(f.Name()))
	mc := tb.Dial(t)
	defer mc.Disconnect(0)
	cabinettest.Await(t, "mosquitto_sub subscribed", nil, func() (bool, string) {
		if strings.Contains(string(read()), " "+marker+" ") {
			return true, ""
		}
		mc.Publish(marker, 1, false, "ready").WaitTimeout(time.Second)
		return false, "marker not seen yet"
	})
	return func() []byte { stop(); return read() }
}
