package romm

import (
	"encoding/json"
	"errors"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// Shape limits on RomM's JSON, checked by do and send on every 2xx body before anything decodes
// it. The body bound alone is not enough: a 15 MiB ROM whose files list held five million {} took
// 2 GiB to decode before project could count them (issue 24), because encoding/json allocates a
// struct or a map for every value first.
//
// The numbers come from jsonlimits_test.go, which builds the costliest documents that still pass
// and measures what decoding them allocates in all: at most ~31 MiB for the typed decoders, ~37
// MiB for the OpenAPI tools' read plus the copies of the answer's text. Real answers are far
// inside (romm-api.md, testdata/, RomM's own 5.3.1 document).
var (
	// typedJSON is for the answers the typed decoders read (decode.go, collections.go,
	// platforms.go, playsessions.go, tokendecode.go, version.go). They allocate for the items of
	// the lists they decode (Lists, and a top-level list) and for a fixed set of fields per
	// object; everything else, such as a collection's rom_ids (every ROM id of the library) or a
	// ROM's achievements, goes to no field and is skipped without allocating, so it is left
	// uncounted and Values is not bounded. An item costs up to ~1 KiB with its slice's growth and
	// its projection (a RomFile, TestTypedWorstCase), so Elements keeps them near 31 MiB.
	typedJSON = bounded.JSONLimits{
		Depth:    32,       // RomM's answers nest ~7 deep (testdata/prism_roms_page.json)
		ArrayLen: maxFiles, // no list the decoders keep may be longer (maxMembers is the same)
		Elements: 30_000,   // a page of 100 ROMs with a few files each is ~2k
		Lists:    []string{"items", "files", "archive_members", "regions", "genres", "companies", "developers", "scopes", "results"},
	}
	// syncJSON is for the save-sync answers (saves*.go): a negotiation's operations, which list a
	// download for every slotted save of the user's library, and a list of saves (its items'
	// device_syncs go to no field). An item with every field set costs ~0.9 KiB to decode with the
	// slice's growth (TestSyncWorstCase), so 30k stay near 26 MiB plus their text.
	syncJSON = bounded.JSONLimits{Depth: 32, ArrayLen: 30_000, Elements: 30_000, Lists: []string{"operations"}}
	// genericJSON is for Get: the OpenAPI tools decode the whole answer into maps and slices and
	// clean a copy of what they select, to hand a model at most 100 items and 64 KiB of it. The
	// costliest value (an object of one member, in a list) costs ~470 bytes that way, ~250 to
	// decode alone (TestGenericWorstCase), so 80k values stay under 37 MiB plus the copies of the
	// answer's text. A page of 100 ROMs as RomM's schema describes them is ~60k values; an answer
	// over the limit is refused with advice to narrow it.
	genericJSON = bounded.JSONLimits{Depth: 64, ArrayLen: 80_000, Elements: 80_000, Values: 80_000}
	// openAPIJSON is for /openapi.json. The client only checks that it is JSON; openapi.Parse
	// decodes it and keeps it, under its own documentLimits, which these equal so the refusal
	// names RomM. RomM 5.3.1's document has 22,699 values, 4,307 list items, 93 in the longest
	// list and nests 12 deep.
	openAPIJSON = bounded.JSONLimits{Depth: 32, ArrayLen: 10_000, Elements: 40_000, Values: 100_000}
)

// jsonLimits are the shape limits of r's answer.
func (r request) jsonLimits() bounded.JSONLimits {
	if r.shape != nil {
		return *r.shape
	}
	return typedJSON
}

// checkShape refuses a 2xx body that goes over r's shape limits. A body that is not JSON is left
// to the caller's decoder, which rejects it before allocating and says so better; route names
// the request, and show says whether the refusal may name where (the sign-in answers carry new
// secrets the client cannot redact, so their errors never quote the input).
func (c *Client) checkShape(route string, r request, body []byte, show bool) error {
	var le *bounded.JSONLimitError
	if !errors.As(bounded.CheckJSON(body, r.jsonLimits()), &le) || !json.Valid(body) {
		return nil
	}
	what := le.What()
	if show {
		what += " (at " + cleanLine(scrubTokens(c.redact(le.Path)), 0) + ")"
	}
	if le.Bound == bounded.BoundDepth {
		return newError(ErrBadData, nil, "RomM's answer to %s has %s, deeper than RomM's API nests: is cabinet.romm.url the RomM address?", route, what)
	}
	advice := "is cabinet.romm.url the RomM address?"
	switch {
	case r.shape == &genericJSON:
		advice = "the cabinet reads no more of one answer: narrow it with the operation's own query parameters (limit, filters)"
	case r.query.Get("limit") != "":
		advice = "ask for fewer items (a smaller limit)"
	}
	return newError(ErrTooLarge, nil, "RomM's answer to %s has %s: %s", route, what, advice)
}
