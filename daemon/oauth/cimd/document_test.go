package cimd

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseDocument(t *testing.T) {
	edit := func(f func(m map[string]any)) string { return string(docFor(claudeID, f)) }
	set := func(k string, v any) string { return edit(func(m map[string]any) { m[k] = v }) }
	drop := func(k string) string { return edit(func(m map[string]any) { delete(m, k) }) }
	many := func(n int, s string) []string { return slices.Repeat([]string{s}, n) }
	for _, c := range []struct {
		name  string
		body  string
		says  string // in the refusal; "": accepted
		check func(Document) bool
	}{
		{name: "claude", body: edit(nil)},
		{name: "minimal", body: `{"client_id":"` + claudeID + `","client_name":"C","redirect_uris":["http://localhost/callback"]}`,
			check: func(d Document) bool {
				return d.TokenEndpointAuthMethod == "none" && d.GrantTypes == nil && d.ClientURI == ""
			}},
		{name: "unknown members allowed", body: edit(func(m map[string]any) {
			m["application_type"] = "native"
			m["jwks_uri"] = "https://claude.ai/jwks.json"
			m["x"] = map[string]any{"nested": []any{1, "two", nil}}
		})},
		{name: "null optional members are absent", body: edit(func(m map[string]any) {
			m["logo_uri"], m["scope"], m["grant_types"], m["token_endpoint_auth_method"] = nil, nil, nil, nil
		}), check: func(d Document) bool {
			return d.LogoURI == "" && d.GrantTypes == nil && d.TokenEndpointAuthMethod == "none"
		}},
		{name: "chatgpt negotiates none", body: edit(func(m map[string]any) {
			m["token_endpoint_auth_method"] = "private_key_jwt"
			m["token_endpoint_auth_methods_supported"] = []string{"none", "private_key_jwt"}
			m["jwks_uri"] = "https://chatgpt.com/oauth/jwks.json"
		}), check: func(d Document) bool { return d.TokenEndpointAuthMethod == "none" }},
		{name: "display text cleaned", body: edit(func(m map[string]any) {
			m["client_name"] = "  Cla\u202eude\u200b\n\tApp\x07 "
			m["scope"] = "mcp\x00 read"
			m["software_id"] = "\u2066id\u2069"
			m["software_version"] = "1.0\r\n"
		}), check: func(d Document) bool {
			return d.ClientName == "Claude App" && d.Scope == "mcp read" && d.SoftwareID == "id" && d.SoftwareVersion == "1.0"
		}},
		{name: "long name cut", body: set("client_name", strings.Repeat("é", 500)),
			check: func(d Document) bool {
				return len([]rune(d.ClientName)) == maxNameRunes && strings.HasSuffix(d.ClientName, "…")
			}},
		{name: "non-https client_uri dropped", body: edit(func(m map[string]any) {
			m["client_uri"] = "http://claude.ai"
			m["logo_uri"] = "javascript:alert(1)"
		}), check: func(d Document) bool { return d.ClientURI == "" && d.LogoURI == "" }},
		{name: "loopback and native redirects", body: set("redirect_uris", []string{
			"http://localhost/callback", "http://127.0.0.1:33418/", "http://[::1]:8080/cb",
			"https://vscode.dev/redirect", "cursor://anysphere.cursor-mcp/oauth/callback", "com.example.app:/oauth2redirect",
		})},
		{name: "redirect kept byte for byte", body: set("redirect_uris", []string{"https://claude.ai/api/mcp/auth_callback?x=%41"}),
			check: func(d Document) bool { return d.RedirectURIs[0] == "https://claude.ai/api/mcp/auth_callback?x=%41" }},
		{name: "20 redirects", body: set("redirect_uris", many(20, "https://claude.ai/cb"))},

		{name: "empty", body: ``, says: "not a JSON object"},
		{name: "array", body: `[]`, says: "not a JSON object"},
		{name: "string", body: `"x"`, says: "not a JSON object"},
		{name: "null", body: `null`, says: "not a JSON object"},
		{name: "byte order mark", body: "\ufeff" + edit(nil), says: "not a JSON object"},
		{name: "truncated", body: edit(nil)[:40], says: "not valid JSON"},
		{name: "trailing data", body: edit(nil) + `x`, says: "more after"},
		{name: "two objects", body: edit(nil) + `{}`, says: "more after"},
		{name: "duplicate client_id", body: `{"client_id":"https://claude.ai/other","client_id":"` + claudeID + `","client_name":"C","redirect_uris":["https://a.example.net/cb"]}`, says: `"client_id" twice`},
		{name: "client_id in another case", body: strings.Replace(edit(nil), `"client_id"`, `"Client_ID"`, 1), says: "no client_id"},
		{name: "no client_id", body: drop("client_id"), says: "no client_id"},
		{name: "client_id a number", body: set("client_id", 7), says: "client_id is not a string"},
		{name: "client_id with a slash more", body: set("client_id", claudeID+"/"), says: "not the URL"},
		{name: "client_id in another case of host", body: set("client_id", "https://Claude.ai/oauth/mcp-oauth-client-metadata"), says: "not the URL"},
		{name: "client_id escaped differently", body: strings.Replace(edit(nil), "mcp-oauth", `mcp\u002doauth`, 1)}, // same string once decoded
		{name: "client_secret", body: set("client_secret", "s"), says: "client_secret"},
		{name: "client_secret null", body: set("client_secret", nil), says: "client_secret"},
		{name: "client_secret_expires_at", body: set("client_secret_expires_at", 0), says: "client_secret_expires_at"},
		{name: "no client_name", body: drop("client_name"), says: "no client_name"},
		{name: "empty client_name", body: set("client_name", ""), says: "no client_name"},
		{name: "invisible client_name", body: set("client_name", "\u202e\u200b \t"), says: "no client_name"},
		{name: "client_name a list", body: set("client_name", []string{"C"}), says: "client_name is not a string"},
		{name: "no redirect_uris", body: drop("redirect_uris"), says: "no redirect_uris"},
		{name: "redirect_uris empty", body: set("redirect_uris", []string{}), says: "no redirect_uris"},
		{name: "redirect_uris a string", body: set("redirect_uris", "https://claude.ai/cb"), says: "not a list"},
		{name: "21 redirects", body: set("redirect_uris", many(21, "https://claude.ai/cb")), says: "at most 20"},
		{name: "redirect null", body: set("redirect_uris", []any{nil}), says: "not a string"},
		{name: "redirect a number", body: set("redirect_uris", []any{"https://claude.ai/cb", 1}), says: "not a string"},
		{name: "redirect too long", body: set("redirect_uris", []string{"https://claude.ai/" + strings.Repeat("a", 2048)}), says: "longer than 2048"},
		{name: "redirect empty", body: set("redirect_uris", []string{""}), says: "empty"},
		{name: "redirect relative", body: set("redirect_uris", []string{"/callback"}), says: "not an absolute URL"},
		{name: "redirect with fragment", body: set("redirect_uris", []string{"https://claude.ai/cb#x"}), says: "fragment"},
		{name: "redirect with space", body: set("redirect_uris", []string{"https://claude.ai/c b"}), says: "space"},
		{name: "redirect with user", body: set("redirect_uris", []string{"https://u@claude.ai/cb"}), says: "user name"},
		{name: "redirect javascript", body: set("redirect_uris", []string{"javascript:alert(1)"}), says: "javascript"},
		{name: "redirect data", body: set("redirect_uris", []string{"data:text/html,x"}), says: "data"},
		{name: "redirect http away", body: set("redirect_uris", []string{"http://evil.example.net/cb"}), says: "loopback"},
		{name: "redirect http to the LAN", body: set("redirect_uris", []string{"http://192.168.1.10/cb"}), says: "loopback"},
		{name: "redirect https without host", body: set("redirect_uris", []string{"https:///cb"}), says: "no host"},
		{name: "second redirect bad", body: set("redirect_uris", []string{"https://claude.ai/cb", "http://evil.example.net/cb"}), says: "redirect_uris[1]"},
		{name: "secret method", body: set("token_endpoint_auth_method", "client_secret_basic"), says: "shared secret"},
		{name: "secret method offering none", body: edit(func(m map[string]any) {
			m["token_endpoint_auth_method"] = "client_secret_post"
			m["token_endpoint_auth_methods_supported"] = []string{"none"}
		}), says: "shared secret"},
		{name: "private_key_jwt only", body: set("token_endpoint_auth_method", "private_key_jwt"), says: "only public clients"},
		{name: "private_key_jwt without none", body: edit(func(m map[string]any) {
			m["token_endpoint_auth_method"] = "private_key_jwt"
			m["token_endpoint_auth_methods_supported"] = []string{"private_key_jwt"}
		}), says: "only public clients"},
		{name: "auth method a number", body: set("token_endpoint_auth_method", 0), says: "not a string"},
		{name: "21 grant types", body: set("grant_types", many(21, "authorization_code")), says: "at most 20"},
		{name: "grant_types a string", body: set("grant_types", "authorization_code"), says: "grant_types is not a list"},
		{name: "logo_uri a number", body: set("logo_uri", 1), says: "logo_uri is not a string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := parseDocument([]byte(c.body), claudeID)
			switch {
			case c.says == "" && err != nil:
				t.Fatalf("parseDocument: %v", err)
			case c.says == "" && d.ClientID != claudeID:
				t.Errorf("ClientID = %q, want %q", d.ClientID, claudeID)
			case c.says == "" && c.check != nil && !c.check(d):
				t.Errorf("parseDocument = %+v", d)
			case c.says != "" && (!errors.Is(err, ErrDocument) || !strings.Contains(err.Error(), c.says)):
				t.Errorf("parseDocument = %+v, %v; want ErrDocument saying %q", d, err, c.says)
			}
			if err != nil {
				checkMessage(t, err)
			}
		})
	}
}
