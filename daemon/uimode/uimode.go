// Package uimode owns EmulationStation's user interface mode (Full, Kiosk,
// Kid) as a parent changes it from Home Assistant or MCP: where ES keeps
// it, how it is read back, and how a change is applied the only way ES
// takes one from outside.
//
// ES keeps the mode as the string setting UIMode of es_settings.cfg (es-core
// Settings.cpp; a value equal to its default, Full, is not written). It
// reads the file once, when it starts, and no API route sets or reloads a
// setting, so a change needs ES restarted; ES also rewrites the whole file
// from memory whenever its menus save one, so an edit made while it runs
// is lost. Applier therefore stops ES the way batocera-es-swissknife
// --restart does (/etc/init.d/S31emulationstation stop: SIGTERM, which
// saves nothing), writes the file (a backup first, then temp + fsync +
// rename), and starts ES again — only while no game runs.
// `es.customsargs=--force-kid` (or --force-kiosk) in batocera.conf forces
// a mode over the file (es-app main.cpp): it is read back and a change
// that it would override is refused.
package uimode

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// DefaultSettings is es_settings.cfg on a cabinet (es-core Paths.cpp,
// BATOCERA).
const DefaultSettings = "/userdata/system/configs/emulationstation/es_settings.cfg"

// DefaultPasskey is ES's default passkey to leave Kiosk and Kid mode
// (Settings.cpp UIMode_passkey): up to eight presses of u, d, l, r, a, b,
// x, y.
const DefaultPasskey = "aaaba"

// maxSettings bounds es_settings.cfg: ES's own is a few KB.
const maxSettings = 1 << 20

// Settings is what es_settings.cfg says about the mode.
type Settings struct {
	Mode    string // UIMode: Full when the file does not set it
	Passkey string // UIMode_passkey: DefaultPasskey when not set
}

// ReadSettings reads es_settings.cfg at path. A missing file is ES's
// defaults.
func ReadSettings(path string) (Settings, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{Mode: haentities.UIModeFull, Passkey: DefaultPasskey}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("read EmulationStation's settings: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err != nil {
		return Settings{}, fmt.Errorf("read EmulationStation's settings: %w", err)
	}
	return ParseSettings(data)
}

// ParseSettings reads the mode and passkey from es_settings.cfg's content
// as ES does (Settings::loadFile): the <string> elements under <config>,
// or at the top when there is no <config>; a later one wins. A value ES
// would not offer (mUIModes) reads as Full, as configgen reads it
// (Emulator.py updateFromESSettings).
func ParseSettings(data []byte) (Settings, error) {
	s := Settings{Mode: haentities.UIModeFull, Passkey: DefaultPasskey}
	els, err := stringElements(data)
	if err != nil {
		return s, err
	}
	for _, e := range els {
		switch e.name {
		case "UIMode":
			s.Mode = haentities.UIModeFull
			if m, err := haentities.ParseUIMode([]byte(e.value)); err == nil {
				s.Mode = m
			}
		case "UIMode_passkey":
			if validPasskey(e.value) {
				s.Passkey = e.value
			}
		}
	}
	return s, nil
}

func validPasskey(p string) bool {
	if p == "" || len(p) > 16 {
		return false
	}
	for _, c := range p {
		if !strings.ContainsRune("udlrabxy", c) {
			return false
		}
	}
	return true
}

// element is one <string name= value=/> of the settings, with its byte
// range in the file.
type element struct {
	name, value string
	start, end  int64
}

// stringElements lists the <string> settings ES reads: children of the
// root <config>, or top-level elements when the root is not <config>.
func stringElements(data []byte) ([]element, error) {
	if len(data) > maxSettings {
		return nil, fmt.Errorf("es_settings.cfg is %d bytes, more than %d: check what wrote it", len(data), maxSettings)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var out []element
	depth, inConfig := 0, false
	var open *element
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("es_settings.cfg is not valid XML (%v): EmulationStation ignores such a file; "+
				"fix or remove it, then try again", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 && t.Name.Local == "config" {
				inConfig = true
				continue
			}
			if t.Name.Local == "string" && (inConfig && depth == 2 || !inConfig && depth == 1) {
				e := element{start: start}
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "name":
						e.name = a.Value
					case "value":
						e.value = a.Value
					}
				}
				open = &e
			}
		case xml.EndElement:
			if open != nil && t.Name.Local == "string" && (inConfig && depth == 2 || !inConfig && depth == 1) {
				open.end = dec.InputOffset()
				out = append(out, *open)
				open = nil
			}
			depth--
			if depth == 0 && inConfig {
				inConfig = false
			}
		}
	}
	return out, nil
}

// SetMode returns es_settings.cfg's content with the mode set: every
// UIMode element is removed and, unless the mode is Full (ES's default,
// which ES itself does not write), one is added at the end of <config>.
// The rest of the file is kept byte for byte. An empty file becomes ES's
// own layout.
func SetMode(data []byte, mode string) ([]byte, error) {
	if _, err := haentities.ParseUIMode([]byte(mode)); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("<?xml version=\"1.0\"?>\n<config>\n</config>\n")
	}
	els, err := stringElements(data)
	if err != nil {
		return nil, err
	}
	var out []byte
	at := int64(0)
	for _, e := range els {
		if e.name != "UIMode" {
			continue
		}
		out = append(out, data[at:e.start]...)
		at = e.end
		// The element's line goes with it when it stood alone on it.
		if trimmed := bytes.TrimRight(out, " \t"); len(trimmed) == 0 || trimmed[len(trimmed)-1] == '\n' {
			if at < int64(len(data)) && data[at] == '\n' {
				out, at = trimmed, at+1
			}
		}
	}
	out = append(out, data[at:]...)
	if mode == haentities.UIModeFull {
		return out, nil
	}
	line := fmt.Sprintf("\t<string name=\"UIMode\" value=\"%s\" />\n", mode)
	if i := bytes.LastIndex(out, []byte("</config>")); i >= 0 {
		if !bytes.HasSuffix(bytes.TrimRight(out[:i], " \t"), []byte("\n")) {
			line = "\n" + line
		}
		return slices.Concat(out[:i:i], []byte(line), out[i:]), nil
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		line = "\n" + line
	}
	return append(out, strings.TrimPrefix(line, "\t")...), nil
}

// Forced is the mode es.customsargs forces in batocera.conf's content
// (--force-kid wins over --force-kiosk, as UIModeController::isUIModeKid
// checks it first), or "" when it forces none.
func Forced(batoceraConf []byte) string {
	args, _ := batoconf.Get(batoceraConf, "es.customsargs")
	kid, kiosk := false, false
	for _, f := range strings.Fields(args) {
		switch f {
		case "--force-kid":
			kid = true
		case "--force-kiosk":
			kiosk = true
		}
	}
	switch {
	case kid:
		return haentities.UIModeKid
	case kiosk:
		return haentities.UIModeKiosk
	}
	return ""
}

// Describe is a mode for people: "Kid mode (only games marked for kids)".
func Describe(mode string) string {
	switch mode {
	case haentities.UIModeFull:
		return "Full mode (every menu and game)"
	case haentities.UIModeKiosk:
		return "Kiosk mode (no settings menus)"
	case haentities.UIModeKid:
		return "Kid mode (no settings menus, only games marked for kids)"
	}
	return untrusted.Clean(mode, 16) + " mode"
}
