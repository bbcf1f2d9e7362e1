package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// entry is what a test reads back of one archive entry.
type entry struct {
	name, uname, gname string
	mode               int64
	uid, gid           int
	mtime              time.Time
	body               string
}

func readArchive(t *testing.T, data []byte) []entry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header has time %v and name %q, want neither", zr.ModTime, zr.Name)
	}
	tr := tar.NewReader(zr)
	var out []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		out = append(out, entry{h.Name, h.Uname, h.Gname, h.Mode, h.Uid, h.Gid, h.ModTime, string(body)})
	}
}

func TestWriteArchive(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	files := []ArchiveFile{
		{Name: "cabinet", Mode: 0o755, Src: write("bin", "ELF", 0o600)}, // the mode is the listed one
		{Name: "README.md", Mode: 0o644, Src: write("readme", "# Cabinet\n", 0o600)},
		{Name: "cabinet.conf", Mode: 0o644, Src: write("conf", "cabinet.name=Batocera\n", 0o666)},
	}
	when := time.Date(2024, 5, 6, 7, 8, 9, 500, time.FixedZone("x", 3600))
	var a, b bytes.Buffer
	if err := WriteArchive(&a, files, when); err != nil {
		t.Fatal(err)
	}
	// Another order and a later file time must not change a byte.
	os.Chtimes(files[0].Src, time.Now(), time.Now().Add(time.Hour))
	if err := WriteArchive(&b, []ArchiveFile{files[2], files[0], files[1]}, when); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same files differ")
	}

	got := readArchive(t, a.Bytes())
	want := []entry{
		{name: "README.md", mode: 0o644, body: "# Cabinet\n"},
		{name: "cabinet", mode: 0o755, body: "ELF"},
		{name: "cabinet.conf", mode: 0o644, body: "cabinet.name=Batocera\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("archive has %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		w.mtime = time.Unix(when.Unix(), 0)
		if g.name != w.name || g.mode != w.mode || g.body != w.body || !g.mtime.Equal(w.mtime) ||
			g.uid != 0 || g.gid != 0 || g.uname != "" || g.gname != "" {
			t.Errorf("entry %d = %+v, want %+v owned by 0:0", i, g, w)
		}
	}
}

func TestWriteArchiveRefuses(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	os.WriteFile(f, nil, 0o644)
	for name, files := range map[string][]ArchiveFile{
		"missing file": {{Name: "cabinet", Mode: 0o755, Src: filepath.Join(dir, "absent")}},
		"directory":    {{Name: "cabinet", Mode: 0o755, Src: dir}},
		"twice":        {{Name: "a", Src: f}, {Name: "a", Src: f}},
	} {
		if err := WriteArchive(io.Discard, files, time.Time{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := WriteArchiveFile(filepath.Join(dir, "x.tar.gz"), []ArchiveFile{{Name: "a", Src: dir}}, time.Time{}); err == nil {
		t.Error("WriteArchiveFile of a directory: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.tar.gz")); !os.IsNotExist(err) {
		t.Errorf("a failed WriteArchiveFile left its file: %v", err)
	}
}

func TestArchiveName(t *testing.T) {
	if got, want := Targets()[2].ArchiveName("1.2.3"), "cabinet-1.2.3-linux-armv7.tar.gz"; got != want {
		t.Errorf("ArchiveName = %q, want %q", got, want)
	}
}
