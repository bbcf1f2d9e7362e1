package romm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/prism"
)

// patchSaveAnswers documents, in doc, what RomM 5.3.1 answers on the save-sync routes beyond its
// OpenAPI document: the HTTPExceptions ({"detail": string}) of negotiate (400 no device or sync
// off, 404 unknown device), of the upload (400 bad file name, 404 unknown ROM or device, 409 newer
// save) and of complete (400 closed session), and the media types of the save's bytes (Starlette's
// FileResponse guesses them from the name; FastAPI documents JSON).
func patchSaveAnswers(t *testing.T, doc string) string {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	responses := func(path, method string) map[string]any {
		r, _ := dig(d, "paths", path, method, "responses").(map[string]any)
		if r == nil {
			t.Fatalf("the document has no %s %s", method, path)
		}
		return r
	}
	detail := map[string]any{"description": "RomM's HTTPException (added by the romm client's test)", "content": map[string]any{
		"application/json": map[string]any{"schema": map[string]any{"type": "object", "required": []any{"detail"},
			"properties": map[string]any{"detail": map[string]any{"type": "string"}}}}}}
	for _, g := range []struct{ path, method, status string }{
		{"/api/sync/negotiate", "post", "400"}, {"/api/sync/negotiate", "post", "404"},
		{"/api/saves", "post", "400"}, {"/api/saves", "post", "404"}, {"/api/saves", "post", "409"},
		{"/api/sync/sessions/{session_id}/complete", "post", "400"},
	} {
		responses(g.path, g.method)[g.status] = detail
	}
	content, _ := dig(responses("/api/saves/{id}/content", "get"), "200", "content").(map[string]any)
	if content == nil {
		t.Fatal("the document has no 200 content for GET /api/saves/{id}/content")
	}
	for _, mt := range []string{"text/plain", "application/octet-stream", "application/zip"} {
		content[mt] = map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPrismProxySaves holds every save-sync request of the client, and the fake's answers, to RomM
// 5.3.1's document through Prism's validating proxy, and once more through one that lets requests
// through unjudged so that the error answers (409, 404, 400) are checked too.
func TestPrismProxySaves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism (node): not in -short")
	}
	doc := patchSaveAnswers(t, patchWriteAnswers(t, prism.PatchedDoc(t, referenceDoc(t, "romm-openapi-5.3.1.json"), fakeromm.Version531)))
	for _, mode := range []string{"proxy", "responses"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			fake, err := fakeromm.New(fakeromm.Options{Version: fakeromm.Version531, Scopes: fakeromm.WriteScopes()})
			if err != nil {
				t.Fatal(err)
			}
			clk := clock.NewFake(syncT0)
			fake.SetClock(clk.Now)
			upstream := httptest.NewServer(fake)
			t.Cleanup(upstream.Close)
			var base string
			if mode == "responses" {
				base = prism.ProxyResponses(t, doc, upstream.URL)
			} else {
				base = prism.Proxy(t, doc, upstream.URL)
			}
			rec := &violationRecorder{next: http.DefaultTransport}
			client := func(token string) *Client {
				return newClient(t, base, func(c *Config) {
					c.Token, c.Timeout, c.HTTPClient = token, 20*time.Second, &http.Client{Transport: rec}
				})
			}
			c := client(fake.Token())
			cab, err := c.RegisterDevice(ctx, DeviceInfo{Name: "Cabinet", Platform: "Batocera", Client: "batocera-cabinet", MAC: "b8:27:eb:00:00:01"})
			rec.check(t, "RegisterDevice")
			if err != nil {
				t.Fatal(err)
			}
			hand := fake.AddDevice(fakeromm.Device{Name: "Handheld", SyncEnabled: true})
			theirs, err := fake.AddSave(fakeromm.SaveSpec{ROMID: fakeromm.ROMCosmicCrusade, Slot: "autosave", FileName: "Cosmic Crusade.srm",
				Emulator: "snes9x", Content: []byte("theirs"), DeviceID: hand, UpdatedAt: syncT0.Add(-time.Hour)})
			if err != nil {
				t.Fatal(err)
			}

			mine := []ClientSave{local(fakeromm.ROMAlphaQuest, "autosave", "mine", syncT0.Add(-time.Minute)),
				local(fakeromm.ROMCosmicCrusade, "", "", syncT0.Add(-time.Minute))}
			_, err = c.NegotiateSync(ctx, cab, mine, []int{fakeromm.ROMAlphaQuest})
			rec.check(t, "NegotiateSync rom_ids")
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.NegotiateSync(ctx, cab, mine, nil)
			rec.check(t, "NegotiateSync")
			if err != nil || len(n.Ops) != 3 {
				t.Fatalf("NegotiateSync: %+v, %v", n, err)
			}
			_, err = c.NegotiateSync(ctx, "no-such-device", nil, nil)
			rec.check(t, "NegotiateSync unknown device")
			mustErr(t, err, ErrDeviceUnknown)

			up := SaveUpload{ROMID: fakeromm.ROMAlphaQuest, Emulator: "fceumm", Slot: "autosave", DeviceID: cab, SessionID: n.SessionID,
				FileName: "Alpha Quest.srm", Content: []byte("mine")}
			if _, err := c.UploadSave(ctx, up); err != nil {
				t.Errorf("UploadSave: %v", err)
			}
			rec.check(t, "UploadSave")
			up.ROMID = fakeromm.ROMCosmicCrusade
			_, err = c.UploadSave(ctx, up)
			rec.check(t, "UploadSave 409")
			mustErr(t, err, ErrSaveConflict)
			_, err = c.UploadSave(ctx, SaveUpload{ROMID: 9999, FileName: "x.srm", Content: []byte("x")})
			rec.check(t, "UploadSave unknown ROM")
			mustErr(t, err, ErrNotFound)
			if _, err := c.Saves(ctx, fakeromm.ROMCosmicCrusade, "autosave"); err != nil {
				t.Errorf("Saves: %v", err)
			}
			rec.check(t, "Saves")

			var buf bytes.Buffer
			if _, err := c.DownloadSave(ctx, theirs, cab, n.SessionID, &buf, 0); err != nil || buf.String() != "theirs" {
				t.Errorf("DownloadSave: %q, %v", buf.String(), err)
			}
			rec.check(t, "DownloadSave")
			if err := c.ConfirmSaveDownloaded(ctx, theirs, cab); err != nil {
				t.Errorf("ConfirmSaveDownloaded: %v", err)
			}
			rec.check(t, "ConfirmSaveDownloaded")
			if err := c.CompleteSync(ctx, n.SessionID, 2, 0); err != nil {
				t.Errorf("CompleteSync: %v", err)
			}
			rec.check(t, "CompleteSync")
			mustErr(t, c.CompleteSync(ctx, n.SessionID, 2, 0), ErrInvalid)
			rec.check(t, "CompleteSync again")

			// The scope probes behind a 403.
			var noDevices []string
			for _, s := range fakeromm.WriteScopes() {
				if s != "devices.read" && s != "devices.write" {
					noDevices = append(noDevices, s)
				}
			}
			limited := client(fake.IssueToken(noDevices, ""))
			_, err = limited.NegotiateSync(ctx, cab, nil, nil)
			rec.check(t, "NegotiateSync without devices.read")
			var se *ScopeError
			if !errors.As(err, &se) || se.Scope != "devices.read" {
				t.Errorf("without devices.read: %v", err)
			}
			_, err = limited.UploadSave(ctx, up)
			rec.check(t, "UploadSave without devices.write")
			if !errors.As(err, &se) || se.Scope != "devices.write" {
				t.Errorf("without devices.write: %v", err)
			}
		})
	}
}
