package prism

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

func TestViolations(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   []string
	}{
		{"", nil},
		{"[]", nil},
		{`[{"location":["response","body","SYSTEM","VERSION"],"severity":"Error","code":"type","message":"Response body property SYSTEM.VERSION must be string"}]`,
			[]string{"Error response.body.SYSTEM.VERSION: Response body property SYSTEM.VERSION must be string"}},
		{`[{"location":["response"],"severity":"Warning","message":"Unable to match the returned status code with those defined in the document: 200,422"},{"location":["query","limit"],"severity":"Error","code":"minimum","message":"m"}]`,
			[]string{"Warning response: Unable to match the returned status code with those defined in the document: 200,422", "Error query.limit: m"}},
		{"not json", []string{"unparsable sl-violations header: not json"}},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("sl-violations", tc.header)
		}
		if got := Violations(h); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Violations(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
}

func rommDoc(t *testing.T) string {
	t.Helper()
	root, err := binarytest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "..", "shared", "reference", "romm-openapi-5.3.1.json")
	if _, err := os.Stat(p); err != nil {
		peertest.RequirePeer(t, err)
	}
	return p
}

func TestPatchedDoc(t *testing.T) {
	p := PatchedDoc(t, rommDoc(t), "5.3.1")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if ex := dig(doc, "components", "schemas", "SystemDict", "properties", "VERSION", "example"); ex != "5.3.1" {
		t.Errorf("VERSION example %v", ex)
	}
	op := func(path string) map[string]any {
		return dig(doc, "paths", path, "get", "responses").(map[string]any)
	}
	for _, code := range []string{"401", "403", "422"} {
		if op("/api/roms")[code] == nil {
			t.Errorf("GET /api/roms has no %s", code)
		}
	}
	if op("/api/heartbeat")["401"] != nil {
		t.Errorf("the open heartbeat got a 401")
	}
	if dig(op("/api/roms/{id}")["404"], "content", "application/json", "schema") == nil {
		t.Errorf("GET /api/roms/{id} 404 has no body schema")
	}
	if op("/api/collections/{id}")["404"] == nil {
		t.Errorf("GET /api/collections/{id} has no 404")
	}
	if _, err := patchDoc(filepath.Join(t.TempDir(), "missing.json"), "x"); err == nil {
		t.Errorf("patched a missing file")
	}
}

// TestMockAndProxy runs both modes once: the mock answers from the
// patched examples, and the proxy turns a response that breaks the
// document into Prism's 500 with sl-violations.
func TestMockAndProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism twice (about 5 s each): not in -short")
	}
	doc := PatchedDoc(t, rommDoc(t), "5.3.1")
	began := time.Now()
	mock := Mock(t, doc)
	t.Logf("mock answering after %s", time.Since(began).Round(time.Millisecond))
	resp, err := http.Get(mock + "/api/heartbeat")
	if err != nil {
		t.Fatal(err)
	}
	var hb struct{ SYSTEM struct{ VERSION string } }
	err = json.NewDecoder(resp.Body).Decode(&hb)
	resp.Body.Close()
	if err != nil || hb.SYSTEM.VERSION != "5.3.1" {
		t.Errorf("mock heartbeat: %v, VERSION %q, want the patched example", err, hb.SYSTEM.VERSION)
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"SYSTEM":{"VERSION":123}}`)
	}))
	defer bad.Close()
	proxy := Proxy(t, doc, bad.URL)
	resp, err = http.Get(proxy + "/api/heartbeat")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	v := Violations(resp.Header)
	if resp.StatusCode != 500 || !strings.Contains(string(body), "errors#VIOLATIONS") || len(v) == 0 ||
		!strings.Contains(strings.Join(v, "\n"), "Error response.body.SYSTEM.VERSION: ") {
		t.Errorf("broken upstream: %d %s, violations %q", resp.StatusCode, body, v)
	}
}
