package fakeromm

// The library as tests see it: copies, so a test cannot change what the
// server serves.

// Platforms returns every platform, fixture then synthetic, by id.
func (s *Server) Platforms() []Platform {
	s.init()
	s.libMu.RLock()
	defer s.libMu.RUnlock()
	return append([]Platform(nil), s.lib.platforms...)
}

// ROMs returns the fixture ROMs, then those AddROM added, by id, with their
// files and bytes (synthetic ROMs: see ROM).
func (s *Server) ROMs() []ROM {
	s.init()
	s.libMu.RLock()
	defer s.libMu.RUnlock()
	out := make([]ROM, 0, len(s.lib.fixture))
	for _, r := range s.lib.fixture {
		out = append(out, cloneROM(r))
	}
	return out
}

// ROM returns ROM id, fixture or synthetic, with its files and bytes.
func (s *Server) ROM(id int) (ROM, bool) {
	s.init()
	s.libMu.RLock()
	defer s.libMu.RUnlock()
	r, ok := s.lib.rom(id)
	return cloneROM(r), ok
}

// ROMCount is how many ROMs the server holds, synthetic ones included.
func (s *Server) ROMCount() int {
	s.init()
	s.libMu.RLock()
	defer s.libMu.RUnlock()
	return s.lib.romCount()
}

// File returns RomFile id (as /api/roms/{id}/files/content takes it).
func (s *Server) File(id int) (File, bool) {
	s.init()
	s.libMu.RLock()
	defer s.libMu.RUnlock()
	f, _, ok := s.lib.file(id)
	return cloneFile(f), ok
}

// Firmware returns the BIOS files.
func (s *Server) Firmware() []Firmware {
	s.init()
	s.libMu.RLock()
	defer s.libMu.RUnlock()
	out := make([]Firmware, 0, len(s.lib.firmware))
	for _, f := range s.lib.firmware {
		f.Bytes = append([]byte(nil), f.Bytes...)
		out = append(out, f)
	}
	return out
}

func cloneROM(r ROM) ROM {
	files := make([]File, 0, len(r.Files))
	for _, f := range r.Files {
		files = append(files, cloneFile(f))
	}
	r.Files = files
	return r
}

func cloneFile(f File) File {
	f.Bytes = append([]byte(nil), f.Bytes...)
	f.ArchiveMembers = append([]Member(nil), f.ArchiveMembers...)
	return f
}
