package fakeromm

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/url"
	"strings"
	"testing"
)

// digests is computed here with the standard library alone, not with the
// package's hasher, so a mistake there cannot hide itself.
func digests(b []byte) Hashes {
	m, s := md5.Sum(b), sha1.Sum(b)
	return Hashes{CRC: fmt.Sprintf("%08x", crc32.ChecksumIEEE(b)), MD5: hex.EncodeToString(m[:]), SHA1: hex.EncodeToString(s[:])}
}

func unzipMember(t *testing.T, archive []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("no member %q", name)
	return nil
}

// TestFixtureHashes recomputes every fixture file's hashes the way RomM's
// scanner does (§5.2b) and compares them with what the fake holds, serves
// in JSON and serves as bytes.
func TestFixtureHashes(t *testing.T) {
	s, base := newServer(t, Options{})
	// The members RomM hashes, in the order it hashes them: code point
	// order (upper case first), no directory entry, settings.ini excluded.
	deltaOrder := []string{"DELTA.CFG", "Delta Force Rally (USA, Europe).md", "extras/map.bin", "readme.txt"}

	for _, r := range s.ROMs() {
		t.Run(r.FSName, func(t *testing.T) {
			var wantROM Hashes
			wantFiles := map[string]Hashes{}
			var wantMembers []Member
			switch r.ID {
			case ROMHotelHavoc: // ios: RomM does not hash the platform
				wantROM, wantFiles[r.Files[0].FileName] = Hashes{}, Hashes{}
			case ROMBetaRacer:
				inner := unzipMember(t, r.Files[0].Bytes, "Beta Racer (Europe).nes")
				wantROM = digests(inner)
				wantFiles[r.FSName] = wantROM
				wantMembers = []Member{{Name: "Beta Racer (Europe).nes", Size: int64(len(inner)), Hashes: wantROM}}
			case ROMDeltaForce:
				var all []byte
				for _, m := range deltaOrder {
					b := unzipMember(t, r.Files[0].Bytes, m)
					all = append(all, b...)
					wantMembers = append(wantMembers, Member{Name: m, Size: int64(len(b)), Hashes: digests(b)})
				}
				wantROM = digests(all)
				wantFiles[r.FSName] = wantROM
			case ROMEchoChamber:
				var all []byte
				names := []string{"Echo Chamber (USA) (Disc 1).bin", "Echo Chamber (USA) (Disc 1).cue",
					"Echo Chamber (USA) (Disc 2).bin", "Echo Chamber (USA) (Disc 2).cue"}
				byName := map[string][]byte{}
				for _, f := range r.Files {
					byName[f.FileName] = f.Bytes
				}
				for _, n := range names {
					all = append(all, byName[n]...)
					wantFiles[n] = digests(byName[n])
				}
				wantROM = digests(all)
				if !bytes.Contains(byName[names[1]], []byte(`FILE "Echo Chamber (USA) (Disc 1).bin" BINARY`)) {
					t.Errorf("disc 1 cue does not name its bin:\n%s", byName[names[1]])
				}
			default:
				wantROM = digests(r.Files[0].Bytes)
				wantFiles[r.FSName] = wantROM
			}
			if r.Hashes != wantROM {
				t.Errorf("ROM hashes %+v, want %+v", r.Hashes, wantROM)
			}
			if len(r.Files) != len(wantFiles) {
				t.Fatalf("%d files, want %d", len(r.Files), len(wantFiles))
			}
			for _, f := range r.Files {
				if f.Hashes != wantFiles[f.FileName] {
					t.Errorf("file %s hashes %+v, want %+v", f.FileName, f.Hashes, wantFiles[f.FileName])
				}
			}
			if fmt.Sprint(r.Files[0].ArchiveMembers) != fmt.Sprint(wantMembers) {
				t.Errorf("archive_members %+v\nwant %+v", r.Files[0].ArchiveMembers, wantMembers)
			}
			checkServedHashes(t, s, base, r)
		})
	}
}

// checkServedHashes compares the detailed JSON and the downloaded bytes
// with the accessor.
func checkServedHashes(t *testing.T, s *Server, base string, r ROM) {
	t.Helper()
	var got struct {
		CRC   string `json:"crc_hash"`
		MD5   string `json:"md5_hash"`
		SHA1  string `json:"sha1_hash"`
		Files []struct {
			ID             int    `json:"id"`
			FileName       string `json:"file_name"`
			Size           int    `json:"file_size_bytes"`
			CRC            string `json:"crc_hash"`
			MD5            string `json:"md5_hash"`
			SHA1           string `json:"sha1_hash"`
			ArchiveMembers []struct {
				Name string `json:"name"`
				Size int64  `json:"size"`
				CRC  string `json:"crc_hash"`
				MD5  string `json:"md5_hash"`
				SHA1 string `json:"sha1_hash"`
			} `json:"archive_members"`
		} `json:"files"`
	}
	getJSON(t, base, fmt.Sprintf("/api/roms/%d", r.ID), s.Token(), 200, &got)
	if (Hashes{got.CRC, got.MD5, got.SHA1}) != r.Hashes {
		t.Errorf("served ROM hashes %s %s %s, want %+v", got.CRC, got.MD5, got.SHA1, r.Hashes)
	}
	for i, f := range got.Files {
		want := r.Files[i]
		if f.ID != want.ID || f.FileName != want.FileName || f.Size != len(want.Bytes) ||
			(Hashes{f.CRC, f.MD5, f.SHA1}) != want.Hashes || len(f.ArchiveMembers) != len(want.ArchiveMembers) {
			t.Errorf("served file %+v, want %+v", f, want.Hashes)
			continue
		}
		for j, m := range f.ArchiveMembers {
			w := want.ArchiveMembers[j]
			if m.Name != w.Name || m.Size != w.Size || (Hashes{m.CRC, m.MD5, m.SHA1}) != w.Hashes {
				t.Errorf("served member %+v, want %+v", m, w)
			}
		}
		code, _, body := get(t, base, fmt.Sprintf("/api/roms/%d/content/%s?file_ids=%d", r.ID, url.PathEscape(r.FSName), f.ID), s.Token())
		if r.MissingFromFS {
			if code != 404 {
				t.Errorf("download of a ROM missing from the filesystem: %d, want 404", code)
			}
			continue
		}
		if code != 200 || !bytes.Equal(body, want.Bytes) {
			t.Errorf("download of file %d: status %d, %d bytes, want 200 and its %d bytes", f.ID, code, len(body), len(want.Bytes))
		}
		if strings.HasSuffix(f.FileName, ".zip") && digests(body) == want.Hashes {
			t.Errorf("a zip's hashes are those of its raw bytes; RomM hashes the members")
		}
	}
}

// TestHashArchiveFallback: an archive RomM cannot read, or with nothing
// eligible in it, is hashed raw with no members.
func TestHashArchiveFallback(t *testing.T) {
	onlyExcluded, err := buildZip([]zipEntry{{"dir/", nil}, {"notes.ini", []byte("x")}, {"gamelist.xml", []byte("<x/>")}})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := buildZip(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"not a zip", []byte("PK\x03\x04 but not really")},
		{"only excluded members", onlyExcluded},
		{"empty archive", empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, members := hashArchive(tc.data)
			if want := digests(tc.data); h != want || members != nil {
				t.Errorf("got %+v %v, want %+v and no members", h, members, want)
			}
		})
	}
}

// TestFileJSONShape: RomM's category default and a null archive_members
// for files that are not archives.
func TestFileJSONShape(t *testing.T) {
	s, base := newServer(t, Options{})
	var got struct {
		Files []map[string]json.RawMessage `json:"files"`
	}
	getJSON(t, base, fmt.Sprintf("/api/roms/%d", ROMAlphaQuest), s.Token(), 200, &got)
	f := got.Files[0]
	if string(f["archive_members"]) != "null" || string(f["category"]) != `"game"` || string(f["full_path"]) != `"roms/nes/Alpha Quest (USA).nes"` {
		t.Errorf("file JSON %v", f)
	}
}
