package es

import (
	"encoding/json"
	"testing"
	"time"
)

var fuzzGameSeeds = []string{
	`{"id":"a","playcount":"abc"}`, `[1,{"id":"x"}]`, `{"rating":"1e400","releasedate":"99999999T999999"}`,
	`{"name":"\u202e\u0000"}`, `null`, `{"theme":"a","theme":"b"}`, `{"gametime":"9223372036854775808"}`,
}

func addSeeds(f *testing.F, files ...string) {
	for _, name := range files {
		f.Add(readTestdata(f, name))
	}
	for _, s := range fuzzGameSeeds {
		f.Add([]byte(s))
	}
}

// isArray reports whether b is a valid JSON array; the decoders must not
// fail on one (odd elements are skipped, odd values are zero).
func isArray(b []byte) bool {
	var raw []json.RawMessage
	return json.Unmarshal(b, &raw) == nil && raw != nil
}

func isObject(b []byte) bool {
	var raw map[string]json.RawMessage
	return json.Unmarshal(b, &raw) == nil && raw != nil
}

func FuzzDecodeSystems(f *testing.F) {
	addSeeds(f, "systems.json", "systems_nes.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		systems, err := decodeSystems(b)
		if isArray(b) && err != nil {
			t.Fatalf("valid array rejected: %v", err)
		}
		if err == nil && !json.Valid(b) {
			t.Fatalf("invalid JSON accepted: %q", b)
		}
		for _, s := range systems {
			_ = s.IsGameSystem()
		}
	})
}

func FuzzDecodeGames(f *testing.F) {
	addSeeds(f, "systems_nes_games.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		games, err := decodeGames(b, time.UTC)
		if isArray(b) && err != nil {
			t.Fatalf("valid array rejected: %v", err)
		}
		if err == nil && !json.Valid(b) {
			t.Fatalf("invalid JSON accepted: %q", b)
		}
		for _, g := range games {
			if g.Rating < 0 || g.Rating > 1 || g.PlayCount < 0 || g.GameTime < 0 {
				t.Fatalf("out-of-range values %+v", g)
			}
		}
	})
}

func FuzzDecodeGame(f *testing.F) {
	addSeeds(f, "game_plain.json", "game_plain_localpaths.json", "game_after_meta.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := decodeGame(b, time.UTC)
		if isObject(b) && err != nil {
			t.Fatalf("valid object rejected: %v", err)
		}
		if err == nil && g.Rating != g.Rating {
			t.Fatal("NaN rating")
		}
	})
}

func FuzzDecodeRunningGame(f *testing.F) {
	for _, name := range []string{"runningGame_running.json", "runningGame_idle.json"} {
		b := readTestdata(f, name)
		f.Add(200, b)
		f.Add(201, b)
	}
	f.Add(200, []byte(`{"id":""}`))
	f.Fuzz(func(t *testing.T, status int, b []byte) {
		g, err := decodeRunningGame(status, b, time.UTC)
		if status == 201 && (g != nil || err != nil) {
			t.Fatalf("201 gave %+v, %v; want nil, nil", g, err)
		}
		if status != 201 && err == nil && (g == nil || g.ID == "") {
			t.Fatalf("status %d: no error and no running game id: %+v", status, g)
		}
	})
}
