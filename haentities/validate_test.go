package haentities

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// captureLine is one line of `mosquitto_sub -V 5 --retain-as-published -F '%r %t %p'`: RETAIN TOPIC
// PAYLOAD.
func captureLine(m Message) string {
	return fmt.Sprintf("%d %s %s", boolInt(m.Retain), m.Topic, m.Payload)
}

// fullCapture is everything a cabinet publishes over a play session: discovery, availability, every
// state shape, and every event.
func fullCapture() []Message {
	s := goldenSettings()
	msgs := Discovery(s, goldenNow)
	msgs = append(msgs, Availability(s, true, goldenNow))
	for _, g := range goldenSnapshots() {
		msgs = append(msgs, States(s, g.snap, goldenNow)...)
	}
	msgs = append(msgs, goldenEvents()...)
	// The daemon's discovery (diagnostics and controls) and diagnostic states, known and unknown.
	daemon := daemonSettings()
	msgs = append(msgs, Discovery(daemon, goldenNow)...)
	msgs = append(msgs, DiagnosticStates(daemon, goldenDiagnostics(), goldenNow)...)
	msgs = append(msgs, DiagnosticStates(daemon, DiagnosticValues{}, goldenNow)...)
	msgs = append(msgs, systemStates(daemon)...)
	msgs = append(msgs, householdStates(daemon)...)
	msgs = append(msgs, householdEvents(daemon)...)
	msgs = append(msgs, saveSyncStates(daemon)...)
	msgs = append(msgs, saveProblems(daemon)...)
	msgs = append(msgs, mcpClientsStates(daemon)...)
	msgs = append(msgs, selectedStates(daemon)...)
	msgs = append(msgs, playStates(daemon)...)
	// Other settings publish under their own topics and must pass too.
	other := Settings{ID: "cab_2", DiscoveryPrefix: "ha", BaseTopic: "arcade/cabinets", Version: "dev", Daemon: true, Controls: true,
		LimitsOn: true, SaveSync: true, MCPClients: true, Achievements: true}
	msgs = append(msgs, Discovery(other, goldenNow)...)
	msgs = append(msgs, States(other, Snapshot{}, goldenNow)...)
	msgs = append(msgs, DiagnosticStates(other, goldenDiagnostics(), goldenNow)...)
	msgs = append(msgs, PowerStateMessage(other, PowerStopped, goldenNow), ArtworkState(other, tinyJPEG(), goldenNow),
		PictureState(other, LastScreenshot, tinyJPEG(), goldenNow))
	msgs = append(msgs, PlayTimeTodayStates(other, PlayDay{Seconds: 60, Day: "2026-01-02"}, goldenNow)...)
	msgs = append(msgs, HouseholdStates(other, HouseholdState{LimitMinutes: -1, LeftSeconds: -1}, goldenNow)...)
	msgs = append(msgs, LimitEventMessage(other, LimitRefused, "Tetris", "bedtime", "", 0, goldenNow, goldenNow))
	msgs = append(msgs, SaveSyncStates(other, SaveSyncState{}, goldenNow)...)
	msgs = append(msgs, SaveProblemMessage(other, SaveProblem{Kind: SaveProblemError, Detail: "RomM is down"}, goldenNow))
	msgs = append(msgs, MCPClientsStates(other, MCPClientsState{}, goldenNow)...)
	msgs = append(msgs, SelectedStates(other, Selected{}, goldenNow)...)
	msgs = append(msgs, SelectedMarqueeState(other, tinyJPEG(), goldenNow)...)
	msgs = append(msgs, PlayStates(other, PlayOutcome{}, goldenNow)...)
	msgs = append(msgs, FavoriteState(other, goldenNow)...)
	msgs = append(msgs, PlayRequestEvent(other, PlayOutcome{Query: "zzz", Outcome: PlayNotFound, At: goldenNow}, goldenNow)...)
	msgs = append(msgs, SessionStart(other, goldenCurrent(), goldenNow), CabinetEvent(other, CabinetStart, goldenNow, goldenNow))
	msgs = append(msgs, AchievementEvent(other, goldenAchievement(), goldenNow))
	msgs = append(msgs, lastAchievementStates(other, goldenAchievement(), goldenNow)...)
	return msgs
}

// TestValidatorAcceptsCapture runs the strict HA discovery validator (a copy of
// ../shared/tools/validate_discovery.py kept in testdata so a clean clone has it) on a full capture.
func TestValidatorAcceptsCapture(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CABINET_REQUIRE_PEERS") == "1" {
			t.Fatalf("python3 is required (CABINET_REQUIRE_PEERS=1) to run validate_discovery.py: %v", err)
		}
		t.Skip("python3 not found: skipping validate_discovery.py --strict (install python3 to run it)")
	}
	var capture bytes.Buffer
	for _, m := range fullCapture() {
		capture.WriteString(captureLine(m) + "\n")
	}
	// The validator only knows the default prefix per run: validate each prefix's configs separately.
	for _, prefix := range []string{"homeassistant", "ha"} {
		t.Run(prefix, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "capture.txt")
			if err := os.WriteFile(file, capture.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(py, filepath.Join("testdata", "validate_discovery.py"), "--strict", "--format", "rtp", "--prefix", prefix, file)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("validate_discovery.py --strict failed: %v\n%s", err, out)
			}
			if !bytes.Contains(out, []byte(" passed, 0 failed")) {
				t.Fatalf("unexpected validator output:\n%s", out)
			}
			t.Logf("validator: %s", bytes.TrimSpace(out))
		})
	}
}

// TestValidatorCatchesBrokenCapture proves the validator test can fail: a retained event and a text
// state over 255 characters must be reported.
func TestValidatorCatchesBrokenCapture(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	s := goldenSettings()
	msgs := Discovery(s, goldenNow)
	msgs = append(msgs, States(s, Snapshot{}, goldenNow)...)
	ev := CabinetEvent(s, CabinetStart, goldenNow, goldenNow)
	ev.Retain = true
	msgs = append(msgs, ev, SessionStart(s, goldenCurrent(), goldenNow))
	var capture bytes.Buffer
	for _, m := range msgs {
		capture.WriteString(captureLine(m) + "\n")
	}
	file := filepath.Join(t.TempDir(), "capture.txt")
	if err := os.WriteFile(file, capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join("testdata", "validate_discovery.py"), "--strict", "--format", "rtp", file).CombinedOutput()
	if err == nil {
		t.Fatalf("validator accepted a retained event:\n%s", out)
	}
	if !bytes.Contains(out, []byte("E-EVENT-RETAINED")) {
		t.Errorf("validator output lacks E-EVENT-RETAINED:\n%s", out)
	}
}

// TestValidatorRejectsSilentDiagnostics shows why only the daemon announces its diagnostics: configs
// whose states never come (a hook's capture) fail the strict validator with W-NO-MESSAGES.
func TestValidatorRejectsSilentDiagnostics(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	s := daemonSettings()
	msgs := append(Discovery(s, goldenNow), States(s, Snapshot{Online: true, Activity: ActivityMenu}, goldenNow)...)
	var capture bytes.Buffer
	for _, m := range msgs {
		capture.WriteString(captureLine(m) + "\n")
	}
	file := filepath.Join(t.TempDir(), "capture.txt")
	if err := os.WriteFile(file, capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join("testdata", "validate_discovery.py"), "--strict", "--format", "rtp", file).CombinedOutput()
	if err == nil {
		t.Fatalf("validator accepted diagnostics that never get a state:\n%s", out)
	}
	if !bytes.Contains(out, []byte("W-NO-MESSAGES")) || !bytes.Contains(out, []byte(CPUTemperature)) {
		t.Errorf("validator output lacks W-NO-MESSAGES for %s:\n%s", CPUTemperature, out)
	}
}
