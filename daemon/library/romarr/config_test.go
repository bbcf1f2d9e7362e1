package romarr

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	tests := []struct {
		name    string
		cfg     Config
		wantURL string
		wantErr string // substring; "" means success
	}{
		{"plain", Config{URL: "http://nas.lan:6868", APIKey: "k"}, "http://nas.lan:6868", ""},
		{"trailing slash trimmed", Config{URL: "http://nas.lan:6868/"}, "http://nas.lan:6868", ""},
		{"path prefix kept", Config{URL: " https://proxy.lan/romarr/ "}, "https://proxy.lan/romarr", ""},
		{"empty", Config{}, "", "cabinet.romarr.url is empty"},
		{"no scheme", Config{URL: "nas.lan:6868"}, "", "not an http:// or https:// address"},
		{"ftp", Config{URL: "ftp://nas.lan"}, "", "not an http:// or https:// address"},
		{"user info", Config{URL: "http://admin:hunter2@nas.lan:6868"}, "", "holds a user name or password"},
		{"key in query", Config{URL: "http://nas.lan:6868/?apikey=hunter2"}, "", "has a query or fragment"},
		{"key with newline", Config{URL: "http://nas.lan", APIKey: "abc\r\nX-Evil: 1"}, "", "not printable ASCII"},
		{"key with space", Config{URL: "http://nas.lan", APIKey: "abc def"}, "", "spaces"},
		{"key too long", Config{URL: "http://nas.lan", APIKey: strings.Repeat("k", 513)}, "", "longer than 512"},
		{"negative timeout", Config{URL: "http://nas.lan", Timeout: -1}, "", "negative"},
		{"insecure client", Config{URL: "https://nas.lan", HTTPClient: insecure}, "", "skips TLS verification"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New() error = %v, want one containing %q", err, tt.wantErr)
				}
				for _, secret := range []string{"hunter2", "X-Evil"} {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("error %q quotes the secret %q", err, secret)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			if got := c.URL(); got != tt.wantURL {
				t.Fatalf("URL() = %q, want %q", got, tt.wantURL)
			}
			if c.timeout != DefaultTimeout {
				t.Fatalf("timeout = %v, want the default %v", c.timeout, DefaultTimeout)
			}
		})
	}
}

// A caller's client is copied, not changed, and gets the redirect policy.
func TestNewCopiesHTTPClient(t *testing.T) {
	mine := &http.Client{}
	c, err := New(Config{URL: "http://nas.lan", HTTPClient: mine})
	if err != nil {
		t.Fatal(err)
	}
	if mine.CheckRedirect != nil {
		t.Fatal("New changed the caller's http.Client")
	}
	if c.http == mine || c.http.CheckRedirect == nil {
		t.Fatal("the client's copy has no redirect policy")
	}
}
