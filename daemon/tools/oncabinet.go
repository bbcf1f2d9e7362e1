package tools

import (
	"context"
	"errors"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"

	"github.com/batocera-cabinet/cabinet/daemon/library/oncabinet"
	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// cabinetMarker says where RomM ROMs are on this cabinet, from ES's own
// game lists (the catalog's on-cabinet index, rebuilt when ES reloads).
type cabinetMarker struct {
	cat *catalog
	// installs are the games Cabinet installed (nil: none known); rommURL
	// is the RomM their ids belong to.
	installs install.Records
	rommURL  string
}

// installed maps the RomM ids of the games Cabinet installed from this
// RomM, and that are still on the cabinet, to their records.
func (m *cabinetMarker) installed() map[int]install.Install {
	if m.installs == nil {
		return nil
	}
	all, err := m.installs.Installs()
	if err != nil {
		return nil
	}
	out := map[int]install.Install{}
	for _, r := range all {
		if r.RomM == m.rommURL && r.Listed {
			out[r.ROMID] = r
		}
	}
	return out
}

// mark returns, for each ROM, where it is on the cabinet or nil. When ES
// cannot be read every mark is nil and a warning says so.
func (m *cabinetMarker) mark(ctx context.Context, roms []romm.ROM, v platformView, warnings *[]string) []*onCabinet {
	out := make([]*onCabinet, len(roms))
	if len(roms) == 0 {
		return out
	}
	// The install records first: a game Cabinet installed needs no matching.
	recs := m.installed()
	for i, r := range roms {
		if rec, ok := recs[r.ID]; ok {
			out[i] = &onCabinet{System: rec.System, GameID: es.GameID(rec.Path), Path: rec.Path}
		}
	}
	ix, err := m.cat.onCabinet(ctx)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			*warnings = append(*warnings, "Whether the games are on this cabinet is unknown: EmulationStation's game lists "+
				"could not be read ("+untrusted.Clean(err.Error(), maxShort)+").")
		}
		return out
	}
	items := make([]oncabinet.Item, len(roms))
	for i, r := range roms {
		items[i] = oncabinet.Item{ROMID: r.ID, Candidate: candidateOf(r, v)}
	}
	for i, match := range ix.Mark(ctx, items) {
		if match != nil && out[i] == nil {
			out[i] = &onCabinet{System: match.System, GameID: match.GameID, Path: match.Path}
		}
	}
	return out
}

// candidateOf is what the on-cabinet index matches a ROM by: its Batocera
// folder, RomM's file name and size, and its files' hashes.
func candidateOf(r romm.ROM, v platformView) oncabinet.Candidate {
	c := oncabinet.Candidate{FSName: r.FSName, SizeBytes: r.FSSizeBytes, Multi: r.HasMultipleFiles}
	if f := v.folder(r.PlatformID); f != nil {
		c.Folder = *f
	}
	for _, f := range r.Files {
		cf := oncabinet.CandidateFile{Name: f.Name, SizeBytes: f.SizeBytes, CRC: f.CRC, MD5: f.MD5, SHA1: f.SHA1}
		for _, m := range f.ArchiveMembers {
			cf.Members = append(cf.Members, romhashMember(m))
		}
		c.Files = append(c.Files, cf)
	}
	return c
}

func romhashMember(m romm.ArchiveMember) romhash.Member {
	return romhash.Member{Name: m.Name, Size: m.SizeBytes, CRC: m.CRC, MD5: m.MD5, SHA1: m.SHA1}
}
