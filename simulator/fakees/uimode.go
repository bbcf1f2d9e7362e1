package fakees

import (
	"os"
	"regexp"
	"sync"
)

// uiModeRe finds ES's UIMode setting in es_settings.cfg; the last one wins,
// as Settings::loadFile sets each in turn. Compiled when first used: the
// binary links this package, and its start must not pay for it.
var uiModeRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<string\s+name="UIMode"\s+value="([A-Za-z]*)"`)
})

// readKid says whether es_settings.cfg at path puts ES in Kid mode.
func readKid(path string) bool {
	if path == "" {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	m := uiModeRe().FindAllSubmatch(b, -1)
	return len(m) > 0 && string(m[len(m)-1][1]) == "Kid"
}

// uiKid says whether ES runs in Kid mode (as read at its last Start).
func (s *Server) uiKid() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kid
}
