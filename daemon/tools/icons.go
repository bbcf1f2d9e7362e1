package tools

import (
	"encoding/base64"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Icons (issue 31): the server's and each tool's, small SVGs shipped in the binary as data URIs
// (each under 1 KiB), so a client shows them without fetching anything. One drawing per kind of
// tool; all are 24×24 strokes in currentColor.

// svgIcon wraps a drawing's elements in the common SVG and makes the icon.
func svgIcon(body string) mcp.Icon {
	svg := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" ` +
		`stroke-linecap="round" stroke-linejoin="round">` + body + `</svg>`
	return mcp.Icon{Src: "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)), MIMEType: "image/svg+xml",
		Sizes: []string{"any"}}
}

// serverIcon is an arcade cabinet.
func serverIcon() mcp.Icon {
	return svgIcon(`<path d="M7 2h10l1 5v15H6V7z"/><path d="M6 7h12"/><rect x="8.5" y="9" width="7" height="5" rx="1"/>` +
		`<circle cx="10" cy="17.5" r="1"/><path d="M14 16.5v2"/>`)
}

// toolIcon is the drawing of a tool's kind, by its name.
func toolIcon(name string) mcp.Icon {
	switch {
	case name == "batocera_launch_game", name == "library_install":
		return svgIcon(`<path d="M7 4l13 8-13 8z"/>`) // play
	case name == "batocera_quit_game", name == "library_uninstall":
		return svgIcon(`<rect x="5" y="5" width="14" height="14" rx="2"/>`) // stop
	case name == "batocera_pause_game":
		return svgIcon(`<path d="M8 5v14M16 5v14"/>`)
	case strings.Contains(name, "save") || strings.Contains(name, "state"):
		return svgIcon(`<path d="M5 3h11l3 3v15H5z"/><path d="M8 3v6h7V3M8 21v-7h8v7"/>`) // floppy
	case name == "batocera_take_screenshot":
		return svgIcon(`<path d="M4 8h4l2-3h4l2 3h4v12H4z"/><circle cx="12" cy="13" r="3.5"/>`)
	case name == "batocera_power":
		return svgIcon(`<path d="M12 3v9"/><path d="M6.3 6.8a8 8 0 1 0 11.4 0"/>`)
	case name == "batocera_set_volume":
		return svgIcon(`<path d="M4 9h4l5-4v14l-5-4H4z"/><path d="M16 9a4 4 0 0 1 0 6M19 6a8 8 0 0 1 0 12"/>`)
	case name == "batocera_show_message":
		return svgIcon(`<path d="M4 5h16v11H9l-5 4z"/>`)
	case strings.Contains(name, "limits") || strings.Contains(name, "grant") || strings.Contains(name, "pause_play"):
		return svgIcon(`<circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/>`) // clock
	case name == "batocera_find_games", name == "library_search":
		return svgIcon(`<circle cx="10.5" cy="10.5" r="6.5"/><path d="M15.5 15.5L21 21"/>`)
	case name == "batocera_play_history":
		return svgIcon(`<path d="M4 20V10M10 20V4M16 20v-7M21 20H3"/>`) // bars
	case strings.HasPrefix(name, "library_") || strings.HasPrefix(name, "romm_") || strings.HasPrefix(name, "romarr_"):
		return svgIcon(`<path d="M4 4h4v16H4zM10 4h4v16h-4z"/><path d="M16 5l3.5-1 3 15.5-3.5 1z"/>`) // books
	}
	return svgIcon(`<circle cx="12" cy="12" r="9"/><path d="M12 11v6M12 7.5v.5"/>`) // information
}
