package fakeromm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// openAPIDoc is what GET /openapi.json serves.
type openAPIDoc struct {
	body   []byte
	source string
}

// maxDocSize bounds the document read from disk (5.3.1's is 426 KB).
const maxDocSize = 8 << 20

// docFor is the saved document each version serves: RomM's own 5.1.0 for
// 5.1.0, and 5.3.1's for the rest (no document of 4.8 or 5.0 was saved;
// theirs would list fewer routes), with info.version set to the version
// served, since clients read the version there too.
func docFor(v string) string {
	switch v {
	case Version480, Version500, Version510:
		return "romm-openapi-5.1.0.json"
	}
	return "romm-openapi-5.3.1.json"
}

var infoVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`("info"\s*:\s*\{[^{}]*"version"\s*:\s*)"[^"]*"`) })

func loadOpenAPI(dir, version string) openAPIDoc {
	if dir == "" {
		if root, err := moduleRoot(); err == nil {
			dir = filepath.Join(root, "..", "shared", "reference")
		}
	}
	name := docFor(version)
	p := filepath.Join(dir, name)
	var body []byte
	err := fmt.Errorf("no module root above the working directory")
	if dir != "" {
		body, err = readBounded(p)
	}
	if err != nil {
		min := fmt.Appendf(nil, `{"openapi":"3.1.0","info":{"title":"RomM API","version":%q},"paths":{}}`, version)
		return openAPIDoc{body: min, source: fmt.Sprintf("minimal document (%s: %v; set Options.ReferenceDir)", name, err)}
	}
	loc := infoVersionRE().FindSubmatchIndex(body)
	if loc == nil {
		return openAPIDoc{body: body, source: p}
	}
	out := append(append(append([]byte(nil), body[:loc[3]]...), fmt.Appendf(nil, "%q", version)...), body[loc[1]:]...)
	src := p
	if !bytes.Equal(out, body) {
		src += " (info.version set to " + version + ")"
	}
	return openAPIDoc{body: out, source: src}
}

func readBounded(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxDocSize {
		return nil, fmt.Errorf("%s is %d bytes, over %d", p, fi.Size(), maxDocSize)
	}
	return os.ReadFile(p)
}

// moduleRoot walks up from the working directory to go.mod. (The same walk
// as simulator/testpeers/binarytest's, which the production binary must not
// link.)
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// OpenAPISource says where GET /openapi.json comes from: a file path, or
// that a minimal document stands in because none was found.
func (s *Server) OpenAPISource() string {
	s.init()
	return s.doc.source
}
