package oauth

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
)

// BenchmarkBearerCheck: what a request costs in the guard with the static
// token and with an OAuth access token, side by side in one run (issue 28:
// the OAuth check adds at most 0.2 ms). The handler behind does nothing.
func BenchmarkBearerCheck(b *testing.B) {
	k := newKit(b)
	redirect := "https://client.example/cb"
	tokPath := filepath.Join(b.TempDir(), "token")
	static, err := httpauth.NewToken(tokPath)
	if err != nil {
		b.Fatal(err)
	}
	client := k.register(redirect)
	access := str(k.signIn(client, redirect, "read play", []string{"read", "play"}), "access_token")
	guard := httpauth.New(httpauth.Options{TokenPath: tokPath, OAuth: k.srv, ToolScope: tools.ToolScope, Now: k.clock.Now})
	h := guard.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"batocera_get_status","arguments":{}}}`
	for _, tc := range []struct{ name, token string }{{"static", static}, {"oauth", access}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
				r.RemoteAddr = "127.0.0.1:5000"
				r.Header.Set("Authorization", "Bearer "+tc.token)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", tc.name, w.Code, w.Body)
				}
			}
		})
	}
	guard.Flush()
	k.srv.Flush()
}
