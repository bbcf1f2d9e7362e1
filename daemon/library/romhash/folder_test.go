package romhash

import (
	"archive/zip"
	"bytes"
	"errors"
	"testing"
)

func TestFolder(t *testing.T) {
	disc1, disc2 := bytes.Repeat([]byte{1}, 3000), bytes.Repeat([]byte{2}, 2000)
	inner := bytes.Repeat([]byte("inner"), 100)
	z := makeZip(t, zent{name: "small", data: []byte("s")}, zent{name: "inner.bin", data: inner, method: zip.Deflate})

	t.Run("several top-level files: per-file sums, no rom-level hash", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "Disc 2.bin", disc2)
		writeFile(t, dir, "Disc 1.bin", disc1)
		writeFile(t, dir, "gamelist.xml", []byte("excluded"))
		writeFile(t, dir, "manual/Manual.zip", z) // a zip inside a folder: largest member
		got, err := Folder(dir, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		wantFiles := []struct {
			name string
			size int
			data []byte
		}{{"Disc 1.bin", len(disc1), disc1}, {"Disc 2.bin", len(disc2), disc2}, {"manual/Manual.zip", len(z), inner}}
		if len(got.Files) != len(wantFiles) {
			t.Fatalf("files = %+v", got.Files)
		}
		for i, w := range wantFiles {
			f := got.Files[i]
			c, m, s := want(w.data)
			if f.Name != w.name || f.Size != int64(w.size) || f.CRC != c || f.MD5 != m || f.SHA1 != s {
				t.Errorf("file %d = %+v, want %s size %d %s", i, f, w.name, w.size, m)
			}
		}
		if got.CRC != "" || got.MD5 != "" || got.Members != nil {
			t.Errorf("rom-level = %+v, want none (order-dependent upstream)", got)
		}
	})
	t.Run("one top-level file: the rom hash is that file's", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "Game.iso", disc1)
		writeFile(t, dir, "dlc/Extra.bin", disc2)
		got, err := Folder(dir, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, got, disc1)
	})
	t.Run("too many files", func(t *testing.T) {
		dir := t.TempDir()
		for _, n := range []string{"a", "b", "c"} {
			writeFile(t, dir, n, []byte(n))
		}
		if _, err := Folder(dir, Limits{MaxMembers: 2}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("err = %v, want ErrTooLarge", err)
		}
	})
}
