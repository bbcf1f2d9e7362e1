package tools

import (
	"encoding/base64"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestIcons: every tool has an icon, each a data URI under 1 KiB of well-formed SVG.
func TestIcons(t *testing.T) {
	r := newRig(t, rigConfig{})
	check := func(what string, icons []mcp.Icon) {
		t.Helper()
		if len(icons) != 1 {
			t.Fatalf("%s: %d icons", what, len(icons))
		}
		src := icons[0].Src
		data, ok := strings.CutPrefix(src, "data:image/svg+xml;base64,")
		if !ok || len(src) > 1024 {
			t.Errorf("%s: %d bytes, %.40s…", what, len(src), src)
		}
		svg, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		d := xml.NewDecoder(strings.NewReader(string(svg)))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Errorf("%s: not well-formed SVG: %v", what, err)
				}
				break
			}
		}
	}
	check("the server", []mcp.Icon{serverIcon()})
	for _, tool := range r.srv.Tools() {
		check(tool.Name, tool.Icons)
	}
}
