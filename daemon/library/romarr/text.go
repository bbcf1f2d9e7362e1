package romarr

import (
	"regexp"
	"strings"
	"sync"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Rune caps for text from ROMarr. Titles are release and game names as indexers spell them
// (long, but a model needs no more than this); sentences are ROMarr's own error and detail text.
const (
	maxTitle    = 200
	maxName     = 100
	maxSlug     = 64
	maxShort    = 64
	maxSentence = 300
	maxPath     = 256
	maxListed   = 16 // strings kept from a list field such as genres
)

// redacted replaces a secret in text.
const redacted = "[redacted]"

// credentialParam matches a credential-looking URL query parameter. ROMarr's error sentences
// can quote a URL of Prowlarr or a download client, and some of those carry a key in the query.
var credentialParam = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)((?:api_?key|apitoken|token|passkey|password|secret)=)[^&\s'"]+`)
})

// scrub removes the client's own key and any credential-looking query value from s.
func (c *Client) scrub(s string) string {
	if c != nil && len(c.key) >= 4 && strings.Contains(s, c.key) {
		s = strings.ReplaceAll(s, c.key, redacted)
	}
	if strings.Contains(s, "=") {
		s = credentialParam().ReplaceAllString(s, "${1}"+redacted)
	}
	return s
}

// text is what every string from ROMarr goes through before it leaves the package. It cleans
// before scrubbing, so a key split by invisible characters is found once they are gone, and
// caps last, so the cap holds after a replacement.
func (c *Client) text(s string, maxRunes int) string {
	return untrusted.Clean(c.scrub(untrusted.Clean(s, 0)), maxRunes)
}

// texts cleans a list, dropping empty entries, keeping at most maxListed.
func (c *Client) texts(in []string, maxRunes int) []string {
	var out []string
	for _, s := range in {
		if len(out) == maxListed {
			break
		}
		if s = c.text(s, maxRunes); s != "" {
			out = append(out, s)
		}
	}
	return out
}
