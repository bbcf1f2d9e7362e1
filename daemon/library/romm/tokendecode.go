package romm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Decoders of the sign-in answers. The token answers (device token, pair-code exchange) carry a new
// bearer token in their body, which the client's redaction does not know; so their errors are
// built from fixed words and field names only, never from the input, even when it is not JSON.

type rawDeviceCode struct {
	DeviceCode               *string `json:"device_code"`
	UserCode                 *string `json:"user_code"`
	VerificationPath         *string `json:"verification_path"`
	VerificationPathComplete *string `json:"verification_path_complete"`
	ExpiresIn                *int64  `json:"expires_in"`
	Interval                 *int64  `json:"interval"`
}

// decodeDeviceCode reads DeviceAuthInitResponse and builds the verification URL on c's base.
func (c *Client) decodeDeviceCode(body []byte) (DeviceCode, error) {
	var raw rawDeviceCode
	if err := json.Unmarshal(body, &raw); err != nil {
		return DeviceCode{}, newError(ErrBadData, nil, "read RomM's sign-in code: %s", tokenJSONProblem(err))
	}
	bad := func(why string) (DeviceCode, error) {
		return DeviceCode{}, newError(ErrBadData, nil, "RomM's sign-in code %s: start the sign-in again, or pair with a code instead", why)
	}
	if raw.DeviceCode == nil || !deviceCodeOK(*raw.DeviceCode) {
		return bad("has no usable device_code")
	}
	if raw.UserCode == nil || !userCodeOK(*raw.UserCode) {
		return bad("has no usable user_code")
	}
	d := DeviceCode{DeviceCode: *raw.DeviceCode, UserCode: *raw.UserCode}
	path := deref(raw.VerificationPathComplete)
	if path == "" {
		path = deref(raw.VerificationPath)
	}
	u, ok := c.verificationURL(path, d.UserCode)
	if !ok || strings.Contains(u, d.DeviceCode) || c.token != "" && strings.Contains(u, c.token) {
		return bad("has no verification path on RomM's own site")
	}
	d.VerificationURL = u
	if raw.ExpiresIn == nil || *raw.ExpiresIn <= 0 {
		return bad("has no lifetime")
	}
	d.ExpiresIn = maxCodeLifetime
	if *raw.ExpiresIn < int64(maxCodeLifetime/time.Second) {
		d.ExpiresIn = time.Duration(*raw.ExpiresIn) * time.Second
	}
	d.Interval = 5 * time.Second // RFC 8628 §3.2's default
	if raw.Interval != nil && *raw.Interval > 0 {
		d.Interval = time.Duration(min(*raw.Interval, 60)) * time.Second
	}
	return d, nil
}

// userCodeOK accepts what a screen can show as it is: 1–32 letters, digits and dashes.
func userCodeOK(s string) bool {
	if s == "" || len(s) > maxUserCode {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

type rawDeviceToken struct {
	AccessToken *string         `json:"access_token"`
	RawToken    *string         `json:"raw_token"` // ClientTokenCreateSchema (pair-code exchange)
	DeviceID    *string         `json:"device_id"`
	Scopes      []string        `json:"scopes"`
	ExpiresAt   json.RawMessage `json:"expires_at"`
}

// decodeDeviceToken reads DeviceAuthTokenResponse.
func decodeDeviceToken(body []byte) (DeviceToken, error) {
	var raw rawDeviceToken
	if err := json.Unmarshal(body, &raw); err != nil {
		return DeviceToken{}, newError(ErrBadData, nil, "read RomM's answer to the sign-in: %s: start the sign-in again", tokenJSONProblem(err))
	}
	return raw.project(raw.AccessToken, "access_token", "start the sign-in again")
}

// decodeExchange reads ClientTokenCreateSchema, the answer to a pair code.
func decodeExchange(body []byte) (DeviceToken, error) {
	var raw rawDeviceToken
	if err := json.Unmarshal(body, &raw); err != nil {
		return DeviceToken{}, newError(ErrBadData, nil, "read RomM's answer to the pair code: %s: press Pair in RomM again", tokenJSONProblem(err))
	}
	return raw.project(raw.RawToken, "raw_token", "press Pair in RomM again")
}

// Bounds on an issued token: RomM's are "rmm_" and 64 hex digits; anything under 16 characters is
// not a secret worth the name (and could not be redacted from text without mangling it).
const (
	minIssuedToken = 16
	maxTokenScopes = 64
	capScope       = 40
)

func (r *rawDeviceToken) project(token *string, field, retry string) (DeviceToken, error) {
	if token == nil || len(*token) < minIssuedToken || checkToken(*token) != nil {
		return DeviceToken{}, newError(ErrBadData, nil, "RomM's answer has no usable %s (missing, too short, or not a token): %s", field, retry)
	}
	if len(r.Scopes) > maxTokenScopes {
		return DeviceToken{}, newError(ErrBadData, nil, "RomM's answer lists more than %d scopes: %s", maxTokenScopes, retry)
	}
	t := DeviceToken{Token: *token}
	if r.DeviceID != nil && deviceIDOK(*r.DeviceID) && !strings.Contains(*r.DeviceID, t.Token) {
		t.DeviceID = *r.DeviceID
	}
	seen := make(map[string]bool, len(r.Scopes))
	for _, s := range r.Scopes {
		if scopeNameOK(s) && !seen[s] && !strings.Contains(t.Token, s) {
			seen[s] = true
			t.Scopes = append(t.Scopes, s)
		}
	}
	exp, ok := parseExpiry(r.ExpiresAt)
	if !ok {
		return DeviceToken{}, newError(ErrBadData, nil, "RomM's answer has an expires_at that is not a time: %s", retry)
	}
	t.ExpiresAt = exp
	return t, nil
}

// scopeNameOK accepts a scope name RomM may add later: lowercase letters, digits, dots, underscores.
func scopeNameOK(s string) bool {
	if s == "" || len(s) > capScope {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// parseExpiry reads null (never) or Python's isoformat, with an offset (UTCDatetime) or without one
// (a naive datetime, taken as UTC).
func parseExpiry(raw json.RawMessage) (time.Time, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			if t.Year() < 1970 || t.Year() > 9999 {
				return time.Time{}, false
			}
			return t, true
		}
	}
	return time.Time{}, false
}

// tokenJSONProblem describes a decode error by position or field name, never by value.
func tokenJSONProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ) && typ.Field != "" && len(typ.Field) <= 40 && scopeNameOK(typ.Field):
		return fmt.Sprintf("%s does not have the type RomM's API documents", typ.Field)
	}
	return "not the JSON object RomM's API documents"
}
