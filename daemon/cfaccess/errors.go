package cfaccess

import "errors"

// Reason says why an assertion was refused, in words that are safe to put in
// a 403 body: it never carries the token or a claim from it.
type Reason string

// The reasons Verify gives. They are a closed set so a caller can count them
// and a client sees the same short text whatever the details were.
const (
	ReasonMissing     Reason = "no assertion"
	ReasonTooLarge    Reason = "assertion too large"
	ReasonMalformed   Reason = "assertion malformed"
	ReasonAlgorithm   Reason = "algorithm not allowed"
	ReasonIssuer      Reason = "wrong issuer"
	ReasonAudience    Reason = "wrong audience"
	ReasonExpired     Reason = "assertion expired"
	ReasonNotYetValid Reason = "assertion not yet valid"
	ReasonNoEmail     Reason = "assertion has no e-mail"
	ReasonEmail       Reason = "e-mail not allowed"
	ReasonUnknownKey  Reason = "unknown signing key"
	ReasonKeys        Reason = "signing keys unavailable"
	ReasonSignature   Reason = "signature invalid"
)

// reasons lists every Reason, so Stats can report each one, zero included,
// and the counters can be a fixed array indexed by position.
var reasons = [...]Reason{
	ReasonMissing, ReasonTooLarge, ReasonMalformed, ReasonAlgorithm,
	ReasonIssuer, ReasonAudience, ReasonExpired, ReasonNotYetValid,
	ReasonNoEmail, ReasonEmail, ReasonUnknownKey, ReasonKeys, ReasonSignature,
}

// Error is every refusal Verify returns. Reason is for the client; Error is
// for the log: it adds detail (such as why the keys could not be fetched, or
// the refused e-mail address) but never the token itself.
type Error struct {
	reason Reason
	detail string
	err    error
}

func refuse(r Reason, detail string, cause error) *Error {
	return &Error{reason: r, detail: detail, err: cause}
}

// Reason is the short text safe to return to the client.
func (e *Error) Reason() Reason { return e.reason }

func (e *Error) Error() string {
	s := "cf access: " + string(e.reason)
	if e.detail != "" {
		s += ": " + e.detail
	}
	return s
}

// Unwrap gives the underlying cause (a golang-jwt error or a key-fetch
// failure), so errors.Is(err, jwt.ErrTokenExpired) and the like work.
func (e *Error) Unwrap() error { return e.err }

// ReasonOf is the Reason of an error from Verify ("" for nil). Any other
// error counts as ReasonMalformed, so a caller always has safe text to send.
func ReasonOf(err error) Reason {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.reason
	}
	return ReasonMalformed
}
