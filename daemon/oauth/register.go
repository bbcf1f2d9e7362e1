package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Registration limits: a client registers once; a flood is refused.
const (
	registrationsPerHour = 20
	maxRedirectURIs      = 10
	maxClientName        = 60
)

// registration is a dynamic client registration request (RFC 7591 §2),
// and, filled in, its answer.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
	ApplicationType         string   `json:"application_type,omitempty"`
}

type registered struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope,omitempty"`
}

// parseRegistration reads a registration request: bounded JSON, an object,
// known fields of the right types (unknown ones ignored, as RFC 7591 asks).
func parseRegistration(b []byte) (registration, error) {
	var reg registration
	if len(b) > maxRegisterBytes {
		return reg, errors.New("the registration is larger than 16 KiB")
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return reg, errors.New("the registration must be a JSON object")
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		return reg, fmt.Errorf("the registration is not valid JSON of the right types: %v", clip(err.Error()))
	}
	if len(reg.RedirectURIs) == 0 {
		return reg, errors.New("redirect_uris is required")
	}
	if len(reg.RedirectURIs) > maxRedirectURIs {
		return reg, fmt.Errorf("at most %d redirect_uris", maxRedirectURIs)
	}
	if len(reg.GrantTypes) > 0 && !slices.Contains(reg.GrantTypes, "authorization_code") {
		return reg, errors.New("grant_types must include authorization_code: it is the only way to sign in here")
	}
	if len(reg.ResponseTypes) > 0 && !slices.Contains(reg.ResponseTypes, "code") {
		return reg, errors.New("response_types must include code")
	}
	return reg, nil
}

// goodRedirects keeps the redirect URIs of acceptable classes (Cursor
// registers a cursor:// one, an https one and a loopback one at once: a bad
// one is dropped, not the registration), and says why the others went.
func goodRedirects(uris []string) (good []string, why []string) {
	for _, u := range uris {
		if _, err := CheckRedirect(u); err != nil {
			why = append(why, err.Error())
			continue
		}
		if !slices.Contains(good, u) {
			good = append(good, u)
		}
	}
	return good, why
}

func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		writeJSON(w, http.StatusMethodNotAllowed, oauthError{Error: "invalid_request", Description: "register with POST"})
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeJSON(w, http.StatusBadRequest, oauthError{Error: "invalid_client_metadata", Description: "send the registration as application/json"})
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRegisterBytes+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError{Error: "invalid_client_metadata", Description: "the registration could not be read"})
		return
	}
	reg, err := parseRegistration(b)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError{Error: "invalid_client_metadata", Description: err.Error()})
		return
	}
	good, why := goodRedirects(reg.RedirectURIs)
	if len(good) == 0 {
		writeJSON(w, http.StatusBadRequest, oauthError{Error: "invalid_redirect_uri", Description: strings.Join(why, "; ")})
		return
	}
	now := s.clock.Now()
	s.mu.Lock()
	ok := s.regs.allow(now, time.Hour, registrationsPerHour)
	s.mu.Unlock()
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(time.Hour/time.Second)))
		writeJSON(w, http.StatusTooManyRequests, oauthError{Error: "temporarily_unavailable", Description: "too many registrations in the last hour: try again later"})
		return
	}
	name := untrusted.Clean(reg.ClientName, maxClientName)
	if name == "" {
		name = "an unnamed client"
	}
	c := Client{ID: "cabinet-" + newID(), Name: name, Kind: KindRegistered, RedirectURIs: good, Created: now}
	err = s.store.update(func(f *stateFile) error {
		if len(f.Clients) >= MaxClients {
			// Make room by the oldest registration never used.
			i := slices.IndexFunc(f.Clients, func(c Client) bool { return c.Kind == KindRegistered && c.LastUsed.IsZero() })
			if i < 0 {
				return errFull
			}
			f.dropClient(f.Clients[i].ID)
		}
		f.Clients = append(f.Clients, c)
		return nil
	})
	if errors.Is(err, errFull) {
		writeJSON(w, http.StatusTooManyRequests, oauthError{Error: "temporarily_unavailable", Description: err.Error()})
		return
	}
	if err != nil {
		s.cfg.Log.Error().Err(err).Msg("OAuth: a registration could not be kept")
		writeJSON(w, http.StatusInternalServerError, oauthError{Error: "server_error", Description: "the registration could not be kept; the cabinet's log says why"})
		return
	}
	s.cfg.Log.Info().Str("client", c.ID).Str("name", c.Name).Strs("redirects", good).Int("dropped", len(why)).Msg("OAuth: a client registered")
	writeJSON(w, http.StatusCreated, registered{ClientID: c.ID, ClientIDIssuedAt: now.Unix(), ClientName: c.Name,
		RedirectURIs: good, GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", Scope: strings.Join(knownScopes(reg.Scope), " ")})
}

var errFull = fmt.Errorf("%d clients are registered: remove some with `cabinet clients revoke ID`", MaxClients)
