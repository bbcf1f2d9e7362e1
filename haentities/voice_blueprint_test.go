package haentities

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// voiceIntents are the questions the voice blueprint answers, each in every voiceLanguages: its
// triggers' ids are <intent>_<language>.
var (
	voiceIntents   = []string{"play", "switch", "now_playing", "stop", "pause", "resume", "save", "load", "played_today", "time_left"}
	voiceLanguages = []string{"en", "fr", "de", "es"}
)

// voiceSamples are sentences as Assist hears them (lower case, punctuation left in: Assist drops
// it), with the trigger each must fire, alone, and the slots it gives.
var voiceSamples = []struct {
	said, trigger, game, system string
}{
	{"Play Sonic 2 on the cabinet", "play_en", "sonic 2", ""},
	{"play Mario Kart on the Super Nintendo on the cabinet", "play_en", "mario kart", "super nintendo"},
	{"launch street fighter 2 on mame on the arcade", "play_en", "street fighter 2", "mame"},
	{"lance Sonic sur la borne", "play_fr", "sonic", ""},
	{"joue à Mario Kart sur la Super Nintendo sur la borne", "play_fr", "mario kart", "super nintendo"},
	{"on joue au tetris sur la borne d'arcade", "play_fr", "tetris", ""},
	{"spiele Sonic am Automaten", "play_de", "sonic", ""},
	{"starte Mario Kart auf dem Super Nintendo am Automaten", "play_de", "mario kart", "super nintendo"},
	{"juega a Sonic en la máquina", "play_es", "sonic", ""},
	{"lanza Mario Kart en la Super Nintendo en la máquina recreativa", "play_es", "mario kart", "super nintendo"},
	{"switch to Tetris on the cabinet", "switch_en", "tetris", ""},
	{"switch to Sonic on the Mega Drive on the cabinet", "switch_en", "sonic", "mega drive"},
	{"passe à Tetris sur la borne", "switch_fr", "tetris", ""},
	{"wechsle zu Tetris am Automaten", "switch_de", "tetris", ""},
	{"cambia a Tetris en la máquina", "switch_es", "tetris", ""},
	{"What's playing on the cabinet?", "now_playing_en", "", ""},
	{"qu'est-ce qui tourne sur la borne ?", "now_playing_fr", "", ""},
	{"was läuft am Automaten", "now_playing_de", "", ""},
	{"¿Qué se está jugando en la máquina?", "now_playing_es", "", ""},
	{"stop the game on the cabinet", "stop_en", "", ""},
	{"arrête le jeu sur la borne", "stop_fr", "", ""},
	{"beende das Spiel am Automaten", "stop_de", "", ""},
	{"cierra el juego en la máquina", "stop_es", "", ""},
	{"pause the game on the cabinet", "pause_en", "", ""},
	{"mets le jeu en pause sur la borne", "pause_fr", "", ""},
	{"mets en pause la partie sur la borne", "pause_fr", "", ""},
	{"pausiere das Spiel am Automaten", "pause_de", "", ""},
	{"pon el juego en pausa en la máquina", "pause_es", "", ""},
	{"pon en pausa el juego en la máquina", "pause_es", "", ""},
	{"resume the game on the cabinet", "resume_en", "", ""},
	{"reprends le jeu sur la borne", "resume_fr", "", ""},
	{"setze das Spiel am Automaten fort", "resume_de", "", ""},
	{"reanuda el juego en la máquina", "resume_es", "", ""},
	{"save the game on the cabinet", "save_en", "", ""},
	{"sauvegarde la partie sur la borne", "save_fr", "", ""},
	{"speichere den Spielstand am Automaten", "save_de", "", ""},
	{"guarda la partida en la máquina", "save_es", "", ""},
	{"load the saved state on the cabinet", "load_en", "", ""},
	{"charge la sauvegarde sur la borne", "load_fr", "", ""},
	{"lade den Spielstand am Automaten", "load_de", "", ""},
	{"carga la partida en la máquina", "load_es", "", ""},
	{"how long did we play on the cabinet today", "played_today_en", "", ""},
	{"combien de temps on a joué sur la borne aujourd'hui", "played_today_fr", "", ""},
	{"wie lange haben wir heute am Automaten gespielt", "played_today_de", "", ""},
	{"cuánto hemos jugado hoy en la máquina", "played_today_es", "", ""},
	{"how much play time is left on the cabinet", "time_left_en", "", ""},
	{"combien de temps reste-t-il sur la borne", "time_left_fr", "", ""},
	{"wie viel Spielzeit bleibt heute noch am Automaten", "time_left_de", "", ""},
	{"cuánto tiempo queda en la máquina", "time_left_es", "", ""},
}

// TestVoiceBlueprint holds the voice blueprint to what it promises: every question has sentences in
// English, French, German and Spanish that Assist accepts; "play" sends the game (and " on
// <system>", in English whatever the language) to the play box, waits for the play request event
// and answers every outcome the event has, and the silence of a cabinet that does not answer; the
// game buttons are pressed for their questions; every answer is there in every language; two
// questions in a row are both answered (not mode single). TestHomeAssistantPieces checks its
// inputs, attributes and event types against the catalogue. Assist cannot run here: the sentences
// are matched by sentenceRegexp, a translation of HA's template syntax close to hassil's for these
// sentences (checked against hassil 1.8, 2.1 and 3.8 when they were written), not by hassil.
func TestVoiceBlueprint(t *testing.T) {
	t.Parallel() // its own python3
	doc := parseHAYAML(t, filepath.Join(haPieces, "play_by_voice.yaml")).(map[string]any)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(out)
	var bp struct {
		Blueprint struct {
			Input map[string]struct {
				Default any `json:"default"`
			} `json:"input"`
		} `json:"blueprint"`
		Mode     string `json:"mode"`
		Triggers []struct {
			Trigger string   `json:"trigger"`
			ID      string   `json:"id"`
			Command []string `json:"command"`
		} `json:"triggers"`
		Variables struct {
			Words map[string]map[string]string `json:"words"`
		} `json:"variables"`
	}
	if err := json.Unmarshal(out, &bp); err != nil {
		t.Fatal(err)
	}
	if bp.Mode == "single" {
		t.Errorf("mode single: a question asked while a game starts would be dropped")
	}

	// Sentences: one trigger per intent and language, in HA's template syntax, without punctuation.
	type sentence struct {
		trigger string
		re      *regexp.Regexp
	}
	var sentences []sentence
	seen := map[string]bool{}
	for _, tr := range bp.Triggers {
		if tr.Trigger != "conversation" {
			t.Errorf("trigger %s is %q: want conversation triggers only", tr.ID, tr.Trigger)
		}
		seen[tr.ID] = true
		intent, lang, _ := strings.Cut(tr.ID, "_")
		if i := strings.LastIndex(tr.ID, "_"); i > 0 {
			intent, lang = tr.ID[:i], tr.ID[i+1:]
		}
		if !slices.Contains(voiceIntents, intent) || !slices.Contains(voiceLanguages, lang) {
			t.Errorf("trigger id %q: want <intent>_<language> of %v × %v", tr.ID, voiceIntents, voiceLanguages)
		}
		asks := intent == "play" || intent == "switch"
		withSystem := 0
		for i, s := range tr.Command {
			re, slots, err := sentenceRegexp(s)
			if err != nil {
				t.Errorf("%s: %q: %v", tr.ID, s, err)
				continue
			}
			sentences = append(sentences, sentence{tr.ID, re})
			if asks != slices.Contains(slots, "game") || !asks && len(slots) > 0 {
				t.Errorf("%s: %q has slots %v: want {game} (and maybe {system}) in play sentences only", tr.ID, s, slots)
			}
			if !slices.Contains(slots, "system") {
				continue
			}
			withSystem++
			// Assist takes a trigger's first matching sentence: the same sentence without the
			// system must come after, or "Sonic on the Mega Drive" would be the game.
			head, _, _ := strings.Cut(s, "{game}")
			_, tail, _ := strings.Cut(s, "{system}")
			if j := slices.Index(tr.Command, head+"{game}"+tail); j >= 0 && j < i {
				t.Errorf("%s: %q comes after the same sentence without a system", tr.ID, s)
			}
		}
		if asks && withSystem == 0 {
			t.Errorf("%s: no sentence with {system}", tr.ID)
		}
	}
	for _, intent := range voiceIntents {
		for _, lang := range voiceLanguages {
			if !seen[intent+"_"+lang] {
				t.Errorf("no trigger %s_%s", intent, lang)
			}
		}
	}
	for _, s := range voiceSamples {
		heard := normalizeSaid(s.said)
		var fired []string
		for _, st := range sentences {
			m := st.re.FindStringSubmatch(heard)
			if m == nil || slices.Contains(fired, st.trigger) {
				continue
			}
			fired = append(fired, st.trigger)
			game, system := submatch(st.re, m, "game"), submatch(st.re, m, "system")
			if st.trigger == s.trigger && (game != s.game || system != s.system) {
				t.Errorf("%q: game %q, system %q; want %q, %q", s.said, game, system, s.game, s.system)
			}
		}
		if len(fired) != 1 || fired[0] != s.trigger {
			t.Errorf("%q fires %v, want %s alone", s.said, fired, s.trigger)
		}
	}

	// Answers: every key in every language; every key a template reads is there.
	en := bp.Variables.Words["en"]
	for _, lang := range voiceLanguages {
		words := bp.Variables.Words[lang]
		if len(words) == 0 || len(words) != len(en) {
			t.Errorf("answers in %s: %d, want the %d of en", lang, len(words), len(en))
		}
		for k := range en {
			if words[k] == "" {
				t.Errorf("answers in %s lack %s", lang, k)
			}
		}
	}
	for _, m := range regexp.MustCompile(`\bt\.(\w+)`).FindAllStringSubmatch(raw, -1) {
		if _, ok := en[m[1]]; !ok {
			t.Errorf("a template reads the answer %s, which words.en lacks", m[1])
		}
	}

	// Playing: the request to the play box, then the wait for the event, then the answer.
	var branches []map[string]any
	walk(doc["actions"], func(m map[string]any) {
		for _, o := range asList(m["choose"]) {
			branches = append(branches, asMap(o))
		}
	})
	// branch is the steps of the branches that name intent in their conditions.
	branch := func(intent string) []any {
		var steps []any
		for _, b := range branches {
			if strings.Contains(fmt.Sprint(b["conditions"]), "'"+intent+"'") {
				steps = append(steps, asList(b["sequence"])...)
			}
		}
		if len(steps) == 0 {
			t.Errorf("no branch answers %s", intent)
		}
		return steps
	}
	input := func(v any) string { return fmt.Sprint(asMap(asMap(v)["entity_id"])["!input"]) }
	var steps []string
	var answer string
	for _, v := range branch("play") {
		step := asMap(v)
		switch {
		case step["action"] == "text.set_value":
			steps = append(steps, "set "+input(step["target"]))
			if value := fmt.Sprint(asMap(step["data"])["value"]); !strings.Contains(value, "request") {
				t.Errorf("text.set_value's value %s: want the request", value)
			}
		case step["wait_for_trigger"] != nil:
			w := asMap(asList(step["wait_for_trigger"])[0])
			steps = append(steps, "wait "+fmt.Sprint(asMap(w["entity_id"])["!input"]))
			if secs, _ := asMap(step["timeout"])["seconds"].(float64); secs < 5 || secs > 30 || step["continue_on_timeout"] != true {
				t.Errorf("wait %v: want a timeout of 5 to 30 s that goes on to answer", step)
			}
		case step["set_conversation_response"] != nil:
			steps = append(steps, "answer")
			answer = fmt.Sprint(step["set_conversation_response"])
		}
	}
	if got := strings.Join(steps, ", "); got != "set play_text, wait play_request, answer" {
		t.Errorf("play: %s; want set play_text, wait play_request, answer", got)
	}
	request := fmt.Sprint(branch("play"))
	for _, want := range []string{`'switch to ' if intent == 'switch'`, `' on ' ~ system`} {
		if !strings.Contains(request, want) {
			t.Errorf("the request lacks %s (the daemon reads \"switch to \" and \" on <system>\" in English)", want)
		}
	}
	var types []string
	for _, e := range PlayEntities() {
		if e.Key == PlayRequest {
			types = e.EventTypes
		}
	}
	for _, typ := range types {
		if !strings.Contains(answer, "kind == '"+typ+"'") {
			t.Errorf("the answer does not handle %s", typ)
		}
	}
	if !strings.Contains(answer, "{%- else -%}") || !strings.Contains(answer, "t.no_answer") {
		t.Errorf("the answer has no else for a cabinet that does not answer: %s", answer)
	}
	var payload map[string]any
	s := daemonSettings()
	ev := PlayRequestEvent(s, PlayOutcome{Query: "q", Outcome: PlayAmbiguous, Game: "g", System: "s",
		Candidates: []PlayCandidate{{Game: "g", System: "s"}}, Reason: "r", At: goldenNow}, goldenNow)
	if len(ev) != 1 {
		t.Fatalf("PlayRequestEvent with controls: %d messages", len(ev))
	}
	if err := json.Unmarshal(ev[0].Payload, &payload); err != nil {
		t.Fatal(err)
	}
	read := regexp.MustCompile(`wait\.trigger\.to_state\.attributes\.(\w+)`).FindAllStringSubmatch(raw, -1)
	if len(read) == 0 {
		t.Errorf("the blueprint never reads the event's attributes")
	}
	for _, m := range read {
		if _, ok := payload[m[1]]; !ok {
			t.Errorf("the blueprint reads the event's %s, which it does not carry: %s", m[1], ev[0].Payload)
		}
	}

	// The game buttons.
	for intent, button := range map[string]string{"stop": "quit_game", "pause": "pause_game", "resume": "pause_game",
		"save": "save_state", "load": "load_state"} {
		pressed := ""
		for _, v := range branch(intent) {
			if step := asMap(v); step["action"] == "button.press" {
				pressed = input(step["target"])
			}
		}
		if pressed != button {
			t.Errorf("%s presses %q, want %s", intent, pressed, button)
		}
	}
	if d, ok := bp.Blueprint.Input["time_left_today"].Default.([]any); !ok || len(d) != 0 {
		t.Errorf("time_left_today defaults to %v: want none, so the household sensor is optional", bp.Blueprint.Input["time_left_today"].Default)
	}
	if left := fmt.Sprint(branch("time_left")); !strings.Contains(left, "| count > 0") {
		t.Errorf("time left: does not check the sensor is given: %s", left)
	}
}

// TestPlayFromTagBlueprint holds the NFC tag blueprint to what it promises: the tag's scan sets the
// play box to the game, with "switch to " first when the switch is on (as it is by default).
// TestHomeAssistantPieces checks its play box input against the catalogue.
func TestPlayFromTagBlueprint(t *testing.T) {
	t.Parallel() // its own python3
	doc := parseHAYAML(t, filepath.Join(haPieces, "play_from_nfc_tag.yaml")).(map[string]any)
	tr := asList(doc["triggers"])
	if len(tr) != 1 || asMap(tr[0])["trigger"] != "tag" || fmt.Sprint(asMap(asMap(tr[0])["tag_id"])["!input"]) != "tag_id" {
		t.Errorf("triggers %v: want the tag of the tag_id input", tr)
	}
	acts := asList(doc["actions"])
	if len(acts) != 1 {
		t.Fatalf("actions %v: want one", acts)
	}
	set := asMap(acts[0])
	value := fmt.Sprint(asMap(set["data"])["value"])
	if set["action"] != "text.set_value" || fmt.Sprint(asMap(asMap(set["target"])["entity_id"])["!input"]) != "play_text" ||
		!strings.Contains(value, "'switch to ' if switch_games") || !strings.Contains(value, "game") {
		t.Errorf("action %v: want text.set_value of the game, \"switch to \" first if switch_games, on play_text", set)
	}
	if d := asMap(asMap(asMap(doc["blueprint"])["input"])["switch_games"])["default"]; d != true {
		t.Errorf("switch_games defaults to %v, want true: a tag is meant to start its game", d)
	}
}

// sentenceRegexp translates a sentence template (HA's: (a|b) alternatives, [optional] parts,
// {slot} wildcards) into an anchored regular expression, with the slots it has. It refuses
// unbalanced brackets, punctuation (Assist refuses it in triggers) and a wildcard right after
// another.
func sentenceRegexp(s string) (*regexp.Regexp, []string, error) {
	const punctuation = ".。,，?¿？؟!¡！;；:：’"
	if i := strings.IndexAny(s, punctuation); i >= 0 {
		return nil, nil, fmt.Errorf("punctuation %q", s[i:i+1])
	}
	var b strings.Builder
	var stack []rune
	var slots []string
	rest := strings.ToLower(s)
	for rest != "" {
		r, size := utf8.DecodeRuneInString(rest)
		rest = rest[size:]
		switch r {
		case '(':
			stack = append(stack, ')')
			b.WriteString("(?:")
		case '[':
			stack = append(stack, ']')
			b.WriteString("(?:")
		case ')', ']':
			if len(stack) == 0 || stack[len(stack)-1] != r {
				return nil, nil, fmt.Errorf("unbalanced %q", r)
			}
			stack = stack[:len(stack)-1]
			b.WriteString(map[rune]string{')': ")", ']': ")?"}[r])
		case '|':
			if len(stack) == 0 {
				return nil, nil, fmt.Errorf("| outside brackets")
			}
			b.WriteString("|")
		case '{':
			name, after, ok := strings.Cut(rest, "}")
			if !ok || !regexp.MustCompile(`^\w+$`).MatchString(name) {
				return nil, nil, fmt.Errorf("bad slot at {%s", rest)
			}
			if strings.HasSuffix(b.String(), "(?P<"+name+">.+?)") || strings.HasSuffix(b.String(), ".+?)") {
				return nil, nil, fmt.Errorf("{%s} right after another slot", name)
			}
			if slices.Contains(slots, name) {
				return nil, nil, fmt.Errorf("{%s} twice", name)
			}
			slots = append(slots, name)
			b.WriteString("(?P<" + name + ">.+?)")
			rest = after
		case '}':
			return nil, nil, fmt.Errorf("unbalanced }")
		case ' ':
			// Beside an optional part a space may be gone: "on [the] x" is "on x" without it.
			if strings.HasPrefix(rest, "[") || strings.HasSuffix(b.String(), ")?") {
				b.WriteString(`\s*`)
			} else {
				b.WriteString(" ")
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if len(stack) > 0 {
		return nil, nil, fmt.Errorf("unclosed %q", stack[len(stack)-1])
	}
	re, err := regexp.Compile("^" + b.String() + "$")
	return re, slots, err
}

// normalizeSaid is what Assist matches of a sentence: lower case, without punctuation, one space
// between words.
func normalizeSaid(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(".。,，?¿？؟!¡！;；:：", r) {
			return ' '
		}
		if r == '’' {
			return '\''
		}
		return unicode.ToLower(r)
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func submatch(re *regexp.Regexp, m []string, name string) string {
	if i := re.SubexpIndex(name); i > 0 {
		return strings.TrimSpace(m[i])
	}
	return ""
}
