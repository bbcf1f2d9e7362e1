package romm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/prism"
)

// violationRecorder keeps Prism's sl-violations of every answer the client reads.
type violationRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (v *violationRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := v.next.RoundTrip(r)
	if err == nil {
		if vs := prism.Violations(resp.Header); len(vs) > 0 {
			v.mu.Lock()
			for _, s := range vs {
				v.seen = append(v.seen, r.Method+" "+r.URL.Path+" → "+resp.Status+": "+s)
			}
			v.mu.Unlock()
		}
	}
	return resp, err
}

// check fails on every violation of severity Error and logs the rest, then forgets them.
func (v *violationRecorder) check(t *testing.T, step string) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range v.seen {
		if strings.Contains(s, ": Error ") {
			t.Errorf("%s: Prism: %s", step, s)
		} else {
			t.Logf("%s: Prism: %s", step, s)
		}
	}
	v.seen = nil
}

// patchWriteAnswers documents, in a copy of doc, the answers RomM 5.3.1 gives on the write and
// sign-in routes that its OpenAPI document leaves out, so that Prism validates them instead of
// passing them with a warning (or, for a 2xx, failing them):
//
//   - POST /api/devices answers 201 for a new device (register_device sets response.status_code;
//     FastAPI documents only the decorator's 200);
//   - the HTTPExceptions, {"detail": string}: 400 from /api/auth/device/token (the four RFC 8628
//     codes), 404/403/429 from /api/client-tokens/exchange, 404 from POST /api/activity/heartbeat,
//     400 from POST /api/play-sessions, 429 from /api/auth/device/init and /token.
func patchWriteAnswers(t *testing.T, doc string) string {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	op := func(path, method string) map[string]any {
		o, _ := dig(d, "paths", path, method).(map[string]any)
		r, _ := o["responses"].(map[string]any)
		if r == nil {
			t.Fatalf("the document has no %s %s", method, path)
		}
		return r
	}
	detail := func(what string) map[string]any {
		return map[string]any{"description": what + " (added by the romm client's test)", "content": map[string]any{
			"application/json": map[string]any{"schema": map[string]any{"type": "object", "required": []any{"detail"},
				"properties": map[string]any{"detail": map[string]any{"type": "string"}}}}}}
	}
	dev := op("/api/devices", "post")
	created, _ := json.Marshal(dev["200"])
	var c201 map[string]any
	_ = json.Unmarshal(created, &c201)
	c201["description"] = "Device created (added by the romm client's test)"
	dev["201"] = c201
	op("/api/auth/device/token", "post")["400"] = detail("authorization_pending, slow_down, access_denied, expired_token")
	op("/api/auth/device/token", "post")["429"] = detail("Too many polling attempts")
	op("/api/auth/device/init", "post")["429"] = detail("Too many authorize attempts")
	for _, code := range []string{"403", "404", "429"} {
		op("/api/client-tokens/exchange", "post")[code] = detail("pair code refused")
	}
	op("/api/activity/heartbeat", "post")["404"] = detail("ROM or device not found")
	op("/api/play-sessions", "post")["400"] = detail("no sessions, or more than 100")
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return doc
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestPrismProxyWrites holds every write and sign-in request, and the fake's answers, to RomM
// 5.3.1's own document through Prism's validating proxy. ProxyResponses lets the requests through
// unjudged once more so that the fake's error answers (400 poll outcomes, 404s) are checked too.
func TestPrismProxyWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism (node): not in -short")
	}
	doc := patchWriteAnswers(t, prism.PatchedDoc(t, referenceDoc(t, "romm-openapi-5.3.1.json"), fakeromm.Version531))
	for _, mode := range []string{"proxy", "responses"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			fake, err := fakeromm.New(fakeromm.Options{Version: fakeromm.Version531, Scopes: fakeromm.WriteScopes()})
			if err != nil {
				t.Fatal(err)
			}
			clk := clock.NewFake(time.Now().UTC().Truncate(time.Second))
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
			c := newClient(t, base, func(c *Config) {
				c.Token = ""
				c.Timeout = 20 * time.Second
				c.HTTPClient = &http.Client{Transport: rec}
			})

			// Device flow: pending, slow_down, approved, consumed; denied.
			d, err := c.DeviceInit(ctx, cabinetInit())
			rec.check(t, "DeviceInit")
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []error{ErrAuthorizationPending, ErrSlowDown} {
				_, err := c.DeviceToken(ctx, d.DeviceCode)
				rec.check(t, "DeviceToken")
				if !errors.Is(err, want) {
					t.Errorf("poll %d: %v, want %v", i, err, want)
				}
			}
			if err := fake.Approve(d.UserCode, nil); err != nil {
				t.Fatal(err)
			}
			clk.Advance(6 * time.Second)
			tok, err := c.DeviceToken(ctx, d.DeviceCode)
			rec.check(t, "DeviceToken approved")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.DeviceToken(ctx, d.DeviceCode)
			rec.check(t, "DeviceToken again")
			mustErr(t, err, ErrExpiredToken)

			// Pair code.
			pt, err := c.ExchangePairCode(ctx, fake.NewPairCode(cabinetScopes))
			rec.check(t, "ExchangePairCode")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.ExchangePairCode(ctx, "ABCD2345")
			rec.check(t, "ExchangePairCode unknown")
			mustErr(t, err, ErrExpiredToken)

			p, err := c.WithToken(tok.Token)
			if err != nil {
				t.Fatal(err)
			}
			paired, err := c.WithToken(pt.Token)
			if err != nil {
				t.Fatal(err)
			}
			id, err := paired.RegisterDevice(ctx, DeviceInfo{Name: "Cabinet", Platform: "Batocera", Client: "batocera-cabinet",
				ClientVersion: "1.0.0", Hostname: "batocera", MAC: "b8:27:eb:00:00:01"})
			rec.check(t, "RegisterDevice")
			if err != nil {
				t.Fatal(err)
			}
			rom1, rom2 := writeTestROMs(t, fake)
			for _, dev := range []string{tok.DeviceID, id} { // both are the fake's one user's
				err := p.Heartbeat(ctx, rom1, dev)
				rec.check(t, "Heartbeat")
				if err != nil {
					t.Errorf("Heartbeat(%s): %v", dev, err)
				}
			}
			err = p.Heartbeat(ctx, rom1, "no-such-device")
			rec.check(t, "Heartbeat unknown device")
			mustErr(t, err, ErrDeviceUnknown)
			err = p.Heartbeat(ctx, 1<<30, tok.DeviceID)
			rec.check(t, "Heartbeat unknown ROM")
			mustErr(t, err, ErrNotFound)
			err = p.ClearHeartbeat(ctx, tok.DeviceID)
			rec.check(t, "ClearHeartbeat")
			if err != nil {
				t.Error(err)
			}

			now := clk.Now()
			sessions := []PlaySession{
				{ROMID: rom1, Start: now.Add(-2 * time.Hour), End: now.Add(-time.Hour), Duration: time.Hour},
				{ROMID: 0, Start: now.Add(-40 * time.Minute), End: now.Add(-30 * time.Minute), Duration: 10 * time.Minute},
				{ROMID: rom2, Start: now.Add(-20 * time.Minute), End: now.Add(time.Hour), Duration: time.Minute},
			}
			for _, dev := range []string{"", tok.DeviceID} {
				res, err := p.PostPlaySessions(ctx, dev, sessions)
				rec.check(t, "PostPlaySessions")
				if err != nil || len(res) != len(sessions) {
					t.Fatalf("PostPlaySessions: %+v, %v", res, err)
				}
				want := []string{SessionCreated, SessionCreated, SessionError}
				if dev != "" {
					want = []string{SessionDuplicate, SessionDuplicate, SessionError}
				}
				for i, r := range res {
					if r.Status != want[i] {
						t.Errorf("device %q, session %d: %+v, want %s", dev, i, r, want[i])
					}
				}
			}

			rom := fake.ROMs()[0]
			reader, err := c.WithToken(fake.Token())
			if err != nil {
				t.Fatal(err)
			}
			if rom.Hashes.MD5 != "" {
				got, err := reader.ROMByHash(ctx, rom.Hashes.CRC, rom.Hashes.MD5, rom.Hashes.SHA1)
				rec.check(t, "ROMByHash")
				if err != nil || got.ID != rom.ID {
					t.Errorf("ROMByHash = %d, %v; want %d", got.ID, err, rom.ID)
				}
			}
			_, err = reader.ROMByHash(ctx, "00000000", "", "")
			rec.check(t, "ROMByHash unknown")
			mustErr(t, err, ErrNotFound)
		})
	}
}
