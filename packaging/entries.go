package packaging

import (
	"fmt"
	"html"
	"path"
	"strings"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Cabinet's own entries in EmulationStation: a small system, "Cabinet",
// whose "games" are what a player may ask of the cabinet with a game pad.
// It is declared in its own es_systems_cabinet.cfg, which ES merges into its
// system list (es-app SystemData::loadAdditionnalConfig reads every
// es_systems_*.cfg of its folder; es_systems_custom.cfg would instead
// replace the whole list). Its <command> runs `cabinet entry` directly, so
// Batocera's launcher (configgen, its scripts, pad-to-key, video modes)
// never runs for it; ES still fires game-start and game-end around it,
// which the tracker ignores for these files (tracker.IsEntry). The entries
// are marked kidgame so Kid mode shows them.

// Entry names: what the daemon answers (socket.OpEntry).
const (
	EntryAskTime  = "ask-for-more-time"
	EntryTimeLeft = "time-left"
)

// EntryExtension is the extension of the entries' files.
const EntryExtension = tracker.EntryExtension

// EntrySystem is the system's name in ES.
const EntrySystem = "cabinet"

// Entry is one of Cabinet's entries.
type Entry struct {
	Name    string // the file's stem: EntryAskTime
	Title   string // the name ES shows
	Desc    string
	Minutes int // what EntryAskTime asks for
}

// Entries are Cabinet's entries, in ES's alphabetical order of titles.
func Entries() []Entry {
	return []Entry{
		{Name: EntryAskTime, Title: "Ask for 15 more minutes", Minutes: 15,
			Desc: "Sends a parent a request for 15 more minutes of play today. The answer shows here."},
		{Name: EntryTimeLeft, Title: "How much time is left?", Desc: "Shows how much play time is left today."},
	}
}

// EntryNamed is the entry whose file stem is name.
func EntryNamed(name string) (Entry, bool) {
	for _, e := range Entries() {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// EntryFiles renders the system's declaration, the entries and their game
// list.
func (l Layout) EntryFiles() []Script {
	dir := l.Entries
	var list strings.Builder
	list.WriteString("<?xml version=\"1.0\"?>\n<!-- Installed by Cabinet; `cabinet doctor` checks it, the installer rewrites it. -->\n<gameList>\n")
	out := []Script{{Path: path.Join(path.Dir(l.ESScripts), "es_systems_cabinet.cfg"), Mode: 0o644, Content: l.entrySystem()}}
	for _, e := range Entries() {
		out = append(out, Script{Path: path.Join(dir, e.Name+EntryExtension), Mode: 0o644,
			Content: "Cabinet entry: EmulationStation runs `cabinet entry` with this file.\n"})
		fmt.Fprintf(&list, "\t<game>\n\t\t<path>./%s%s</path>\n\t\t<name>%s</name>\n\t\t<desc>%s</desc>\n\t\t<kidgame>true</kidgame>\n\t</game>\n",
			e.Name, EntryExtension, html.EscapeString(e.Title), html.EscapeString(e.Desc))
	}
	list.WriteString("</gameList>\n")
	return append(out, Script{Path: path.Join(dir, "gamelist.xml"), Mode: 0o644, Content: list.String()})
}

// entrySystem is es_systems_cabinet.cfg. %ROM% is the entry's path,
// escaped for sh by ES (FileData::getlaunchCommand).
func (l Layout) entrySystem() string {
	return fmt.Sprintf(`<?xml version="1.0"?>
<!-- Installed by Cabinet; `+"`cabinet doctor`"+` checks it, the installer rewrites it. -->
<systemList>
	<system>
		<name>%s</name>
		<fullname>Cabinet</fullname>
		<path>%s</path>
		<extension>%s</extension>
		<command>%s entry %%ROM%%</command>
		<platform>ignore</platform>
		<theme>%s</theme>
	</system>
</systemList>
`, EntrySystem, html.EscapeString(l.Entries), EntryExtension, html.EscapeString(shQuote(l.Binary)), EntrySystem)
}
