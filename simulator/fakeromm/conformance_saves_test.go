package fakeromm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/prism"
)

// upload sends a multipart save through the proxy, as conformer.do sends JSON.
func (c conformer) upload(query, who, filename string, content []byte, want int) []byte {
	c.t.Helper()
	tok, ok := c.token[who]
	if !ok {
		tok = who
	}
	ct, body := multipartSave(c.t, filename, false, content)
	code, hdr, out := rawDo(c.t, http.MethodPost, c.base+"/api/saves?"+query, tok, ct, body)
	if v := prism.Violations(hdr); len(v) > 0 {
		c.t.Errorf("POST /api/saves?%s: %d, Prism reports:\n  %s\n  body %.300s", query, code, strings.Join(v, "\n  "), out)
		return out
	}
	if code != want {
		c.t.Errorf("POST /api/saves?%s: %d, want %d: %.300s", query, code, want, out)
	}
	return out
}

// savesDoc is writesDoc with the media types GET /api/saves/{id}/content
// answers in: Starlette's FileResponse guesses it from the save's name
// (text/plain for .srm, application/zip, ...), where FastAPI's document
// says application/json because the route declares no response class.
func savesDoc(t *testing.T) string {
	t.Helper()
	p := writesDoc(t)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ok, _ := doc["paths"].(map[string]any)["/api/saves/{id}/content"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)
	content, _ := ok["content"].(map[string]any)
	if content == nil {
		t.Fatal("the document has no 200 content for GET /api/saves/{id}/content")
	}
	for _, mt := range []string{"text/plain", "application/octet-stream", "application/zip"} {
		content[mt] = map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPrismConformanceSaves drives every save-sync route (negotiate, upload,
// list, one save, its bytes, the download confirmation, tracking, the
// sessions) through `prism proxy --errors` on RomM's 5.3.1 document with
// docGaps, then the fake's own 422s through a proxy that forwards every
// request.
func TestPrismConformanceSaves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism twice (about 5 s each): not in -short")
	}
	t.Parallel()
	doc := savesDoc(t)
	s, err := New(Options{Scopes: WriteScopes()})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(t0)
	s.SetClock(clk.Now)
	limited, err := New(Options{Token: limitedToken, Scopes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+limitedToken {
			limited.ServeHTTP(w, r)
			return
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	c := conformer{t: t, base: prism.Proxy(t, doc, up.URL),
		token: map[string]string{"full": s.Token(), "limited": limitedToken, "bad": "rmm_not_a_token", "": ""}}
	cab := s.AddDevice(Device{Name: "Cabinet", SyncEnabled: true})
	hand := s.AddDevice(Device{Name: "Handheld", SyncEnabled: true})
	bound := s.IssueToken(WriteScopes(), cab)
	off := s.AddDevice(Device{Name: "Off"})
	theirs, err := s.AddSave(SaveSpec{ROMID: ROMCosmicCrusade, Slot: "autosave", FileName: "Cosmic Crusade.srm",
		Content: []byte("theirs"), DeviceID: hand, UpdatedAt: t0.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(-30 * time.Minute).Format(time.RFC3339)

	// Negotiate: uploads, a paired save, a download; the device from the token; refusals.
	var n negotiation
	decode(t, c.do("POST", "/api/sync/negotiate", "full", map[string]any{"device_id": cab, "saves": []any{
		map[string]any{"rom_id": ROMAlphaQuest, "file_name": "Alpha Quest.srm", "slot": "autosave", "emulator": "fceumm",
			"content_hash": md5hex([]byte("mine")), "updated_at": at, "file_size_bytes": 4},
		map[string]any{"rom_id": ROMCosmicCrusade, "file_name": "Cosmic Crusade.srm", "slot": "autosave", "emulator": nil,
			"content_hash": nil, "updated_at": at, "file_size_bytes": 4},
		map[string]any{"rom_id": ROMBetaRacer, "file_name": "Beta Racer.srm", "slot": nil, "updated_at": at, "file_size_bytes": 0},
	}}, 200), &n)
	c.do("POST", "/api/sync/negotiate", "full", map[string]any{"device_id": cab, "rom_ids": []int{ROMAlphaQuest, ROMCosmicCrusade},
		"saves": []any{}}, 200)
	c.do("POST", "/api/sync/negotiate", bound, map[string]any{"saves": []any{}}, 200)
	c.do("POST", "/api/sync/negotiate", "full", map[string]any{"saves": []any{}}, 400)
	c.do("POST", "/api/sync/negotiate", "full", map[string]any{"device_id": off, "saves": []any{}}, 400)
	c.do("POST", "/api/sync/negotiate", "full", map[string]any{"device_id": "nope", "saves": []any{}}, 404)
	decode(t, c.do("POST", "/api/sync/negotiate", "full", map[string]any{"device_id": cab, "saves": []any{}}, 200), &n)

	// Upload: 409, overwrite, identical content, no slot; refusals.
	q := fmt.Sprintf("rom_id=%d&emulator=snes9x&slot=autosave&device_id=%s&session_id=%d", ROMCosmicCrusade, cab, n.SessionID)
	c.upload(q, "full", "Cosmic Crusade.srm", []byte("mine"), 409)
	var a saveAnswer
	decode(t, c.upload(q+"&overwrite=true", "full", "Cosmic Crusade.srm", []byte("mine"), 200), &a)
	clk.Advance(time.Second)
	c.upload(q, "full", "Cosmic Crusade.srm", []byte("mine"), 200)
	c.upload(fmt.Sprintf("rom_id=%d", ROMAlphaQuest), "full", "Alpha Quest.srm", []byte("archive"), 200)
	c.upload(fmt.Sprintf("rom_id=%d", ROMAlphaQuest), "full", "", []byte("x"), 400)
	c.upload("rom_id=999", "full", "x.srm", []byte("x"), 404)
	c.upload(fmt.Sprintf("rom_id=%d&device_id=nope", ROMAlphaQuest), "full", "x.srm", []byte("x"), 404)
	c.upload(fmt.Sprintf("rom_id=%d", ROMAlphaQuest), "limited", "x.srm", []byte("x"), 403)
	c.upload(fmt.Sprintf("rom_id=%d", ROMAlphaQuest), "bad", "x.srm", []byte("x"), 401)

	// Reading saves back.
	c.do("GET", fmt.Sprintf("/api/saves?rom_id=%d", ROMCosmicCrusade), "full", nil, 200)
	c.do("GET", fmt.Sprintf("/api/saves?rom_id=%d&slot=autosave&device_id=%s", ROMCosmicCrusade, cab), "full", nil, 200)
	c.do("GET", "/api/saves?rom_ids=1&rom_ids=3&platform_id=2", "full", nil, 200)
	c.do("GET", "/api/saves?device_id=nope", "full", nil, 404)
	c.do("GET", fmt.Sprintf("/api/saves/%d", a.ID), "full", nil, 200)
	c.do("GET", fmt.Sprintf("/api/saves/%d?device_id=%s", theirs, cab), "full", nil, 200)
	c.do("GET", "/api/saves/999", "full", nil, 404)
	c.do("GET", "/api/saves", "limited", nil, 403)
	c.do("GET", "/api/saves", "bad", nil, 401)
	// The bytes (FastAPI documents the download as JSON; Prism takes any body for schema {}).
	c.do("GET", fmt.Sprintf("/api/saves/%d/content?device_id=%s&session_id=%d&optimistic=false", theirs, cab, n.SessionID), "full", nil, 200)
	c.do("GET", "/api/saves/999/content", "full", nil, 404)
	c.do("POST", fmt.Sprintf("/api/saves/%d/downloaded", theirs), "full", map[string]string{"device_id": cab}, 200)
	c.do("POST", fmt.Sprintf("/api/saves/%d/downloaded", theirs), "full", map[string]string{"device_id": "nope"}, 404)
	c.do("POST", "/api/saves/999/downloaded", "full", map[string]string{"device_id": cab}, 404)
	c.do("POST", fmt.Sprintf("/api/saves/%d/downloaded", theirs), "limited", map[string]string{"device_id": cab}, 403)
	c.do("POST", fmt.Sprintf("/api/saves/%d/untrack", theirs), "full", map[string]string{"device_id": cab}, 200)
	c.do("POST", fmt.Sprintf("/api/saves/%d/track", theirs), "full", map[string]string{"device_id": cab}, 200)

	// Sessions.
	c.do("GET", "/api/sync/sessions", "full", nil, 200)
	c.do("GET", "/api/sync/sessions?device_id="+cab+"&limit=2", "full", nil, 200)
	c.do("GET", fmt.Sprintf("/api/sync/sessions/%d", n.SessionID), "full", nil, 200)
	c.do("GET", "/api/sync/sessions/999", "full", nil, 404)
	complete := fmt.Sprintf("/api/sync/sessions/%d/complete", n.SessionID)
	c.do("POST", complete, "full", map[string]int{"operations_completed": 2, "operations_failed": 1}, 200)
	c.do("POST", complete, "full", map[string]int{}, 400)
	c.do("POST", "/api/sync/sessions/999/complete", "full", map[string]int{}, 404)
	c.do("POST", complete, "limited", map[string]int{}, 403)
	c.do("POST", "/api/sync/negotiate", "limited", map[string]any{"device_id": cab, "saves": []any{}}, 403)

	// The fake's own 422s.
	f := c
	f.base = prism.ProxyResponses(t, doc, up.URL)
	f.do("POST", "/api/sync/negotiate", "full", map[string]any{"device_id": cab, "rom_ids": []any{0},
		"saves": []any{map[string]any{"rom_id": "x", "updated_at": "yesterday"}}}, 422)
	f.do("POST", "/api/sync/negotiate", "full", map[string]any{}, 422)
	f.do("GET", "/api/saves?rom_id=x", "full", nil, 422)
	f.do("GET", "/api/saves/x/content?optimistic=maybe", "full", nil, 422)
	f.do("POST", "/api/saves/1/downloaded", "full", map[string]any{}, 422)
	f.do("POST", "/api/sync/sessions/1/complete", "full", map[string]any{"operations_completed": "many"}, 422)
	f.do("POST", "/api/saves?rom_id=1", "full", map[string]any{}, 422)
}
