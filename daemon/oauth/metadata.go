package oauth

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

// protectedResource is the MCP endpoint's metadata (RFC 9728 §2).
type protectedResource struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// asMetadata is the authorization server's metadata (RFC 8414 §2), with
// what MCP clients look for: claude.ai picks Client ID Metadata Documents
// only when client_id_metadata_document_supported is true and "none" is an
// auth method; clients refuse PKCE without code_challenge_methods_supported.
type asMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethods          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation              string   `json:"service_documentation,omitempty"`
}

func onlyGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, oauthError{Error: "invalid_request", Description: "use GET"})
		return false
	}
	return true
}

func (s *Server) servePRM(w http.ResponseWriter, r *http.Request) {
	if !onlyGet(w, r) {
		return
	}
	// Both paths describe the one resource, /mcp (RFC 9728 §3.1 inserts
	// its path; clients that know only the origin try the root).
	w.Header().Set("Cache-Control", "max-age=300")
	writeMetadata(w, protectedResource{Resource: s.resource, AuthorizationServers: []string{s.issuer},
		ScopesSupported: httpauth.Scopes, BearerMethodsSupported: []string{"header"}, ResourceName: "Cabinet"})
}

func (s *Server) serveASMetadata(w http.ResponseWriter, r *http.Request) {
	if !onlyGet(w, r) {
		return
	}
	writeMetadata(w, asMetadata{
		Issuer: s.issuer, AuthorizationEndpoint: s.issuer + PathAuthorize, TokenEndpoint: s.issuer + PathToken,
		RegistrationEndpoint: s.issuer + PathRegister, RevocationEndpoint: s.issuer + PathRevoke,
		ScopesSupported: httpauth.Scopes, ResponseTypesSupported: []string{"code"}, ResponseModesSupported: []string{"query"},
		GrantTypesSupported: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethods: []string{"none"},
		RevocationEndpointAuthMethods: []string{"none"}, CodeChallengeMethodsSupported: []string{"S256"},
		ClientIDMetadataDocumentSupported: s.cfg.Metadata != nil, IssParameterSupported: true,
	})
}

func writeMetadata(w http.ResponseWriter, v any) {
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "max-age=300")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(v)
}

// sameResource: a resource parameter names the MCP endpoint: scheme and
// host in any case, one trailing slash or none (RFC 8707; MCP asks servers
// to accept both and clients to send it without).
func (s *Server) sameResource(got string) bool {
	got = strings.TrimSuffix(got, "/")
	if len(got) != len(s.resource) {
		return false
	}
	// The issuer part compares case-insensitively, the path exactly.
	n := len(s.issuer)
	return strings.EqualFold(got[:n], s.issuer) && got[n:] == ResourcePath
}
