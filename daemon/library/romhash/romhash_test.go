package romhash

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"
)

func TestKnownVectors(t *testing.T) {
	// Published check values: crc32("123456789") = cbf43926, md5("") is blanked by RomM.
	dir := t.TempDir()
	p := writeFile(t, dir, "check.bin", []byte("123456789"))
	got, err := File(p, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got.CRC != "cbf43926" || got.MD5 != "25f9e794323b453885f5181f1b624d0b" || got.SHA1 != "f7c3bc1d808e04732adf679965ccc34ca7ae3441" {
		t.Errorf("got %+v", got)
	}
	// A crc whose top byte is 0 keeps its leading zeros (crc32_to_hex: 4 big-endian bytes).
	lead := []byte{0x00, 0x00, 0x00, 0x01}
	for i := 0; crc32.ChecksumIEEE(lead) >= 1<<28; i++ {
		binary.BigEndian.PutUint32(lead, uint32(i))
	}
	got, err = File(writeFile(t, dir, "lead.bin", lead), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.CRC) != 8 || got.CRC[0] != '0' {
		t.Errorf("crc %q: want 8 digits with a leading zero", got.CRC)
	}
	checkSums(t, got, lead)
	// Empty file: RomM blanks all three.
	got, err = File(writeFile(t, dir, "empty.nes", nil), Limits{})
	if err != nil || got.CRC != "" || got.MD5 != "" || got.SHA1 != "" {
		t.Errorf("empty: %+v %v", got, err)
	}
}

func TestRomExtension(t *testing.T) {
	for _, tc := range []struct{ name, ext string }{
		{"Super Mario World (USA).sfc", "sfc"},
		{"Game.tar.gz", "tar.gz"},
		{"Game.nes.zip", "nes.zip"}, // RomM then hashes it by its largest member
		{"Game.NES.zip", "zip"},
		{"Game.ZIP", "ZIP"},
		{"Game v1.1.zip", "zip"},
		{"Super Mario Bros. (World).zip", "zip"},
		{"a.b.c.zip", "b.c.zip"},
		{"noext", ""},
		{"trailing.", ""},
		{"Game.zip\n", "zip"},
		{"Jeu.été", "été"},
	} {
		if got := romExtension(tc.name); got != tc.ext {
			t.Errorf("romExtension(%q) = %q, want %q", tc.name, got, tc.ext)
		}
	}
}

func TestZipComposite(t *testing.T) {
	a, b, c := []byte("AAA first member"), []byte("BBB second"), []byte("CCC third member bytes")
	big := bytes.Repeat([]byte("ROM!"), 20000)
	for _, tc := range []struct {
		name    string
		file    string
		ents    []zent
		members []Member // nil: hashed without members
		bytes   []byte   // what the ROM hash covers
	}{
		{
			name: "single member equals the raw member", file: "one.zip",
			ents:    []zent{{name: "Game.nes", data: big, method: zip.Deflate}},
			members: []Member{wantMember("Game.nes", big)}, bytes: big,
		},
		{
			name: "sorted by name, not by insertion", file: "three.zip",
			ents:    []zent{{name: "c.bin", data: c}, {name: "a.bin", data: a, method: zip.Deflate}, {name: "b.bin", data: b}},
			members: []Member{wantMember("a.bin", a), wantMember("b.bin", b), wantMember("c.bin", c)}, bytes: cat(a, b, c),
		},
		{
			name: "ASCII order: upper case first, '.' before '/'", file: "ascii.zip",
			ents:    []zent{{name: "a/x.bin", data: a}, {name: "a.bin", data: b}, {name: "B.bin", data: c}},
			members: []Member{wantMember("B.bin", c), wantMember("a.bin", b), wantMember("a/x.bin", a)}, bytes: cat(c, b, a),
		},
		{
			name: "folders inside the zip: directory entries skipped, nested files kept", file: "nested.zip",
			ents:    []zent{{name: "disc/"}, {name: "disc/Track 02.bin", data: b}, {name: "disc/Game.cue", data: a}},
			members: []Member{wantMember("disc/Game.cue", a), wantMember("disc/Track 02.bin", b)}, bytes: cat(a, b),
		},
		{
			name: "default exclusions", file: "excl.zip",
			ents:    []zent{{name: "gamelist.xml", data: c}, {name: "Game.nes", data: a}, {name: "save.DB", data: c}, {name: "x/.DS_Store", data: c}, {name: "g.nes:Zone.Identifier", data: c}},
			members: []Member{wantMember("Game.nes", a)}, bytes: a,
		},
		{
			name: "only excluded entries: raw", file: "onlyexcl.zip",
			ents: []zent{{name: "gamelist.xml", data: c}},
		},
		{name: "empty zip: raw", file: "empty.zip"},
		{
			name: "encrypted member: raw", file: "enc.zip",
			ents: []zent{{name: "a.bin", data: a}, {name: "b.bin", data: b, flags: 0x1}},
		},
		{
			name: "upper-case .ZIP is a zip too", file: "UP.ZIP",
			ents:    []zent{{name: "a.bin", data: a}},
			members: []Member{wantMember("a.bin", a)}, bytes: a,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := makeZip(t, tc.ents...)
			got, err := File(writeFile(t, t.TempDir(), tc.file, raw), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Members, tc.members) {
				t.Errorf("members = %+v\nwant %+v", got.Members, tc.members)
			}
			if tc.members == nil {
				checkSums(t, got, raw)
			} else {
				checkSums(t, got, tc.bytes)
			}
		})
	}
}

func TestZipCompositeEmptyMembers(t *testing.T) {
	// Members of zero bytes: each keeps its unblanked hashes, the ROM hash is blanked.
	raw := makeZip(t, zent{name: "a"}, zent{name: "b"})
	got, err := File(writeFile(t, t.TempDir(), "z.zip", raw), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Members) != 2 || got.Members[0].CRC != "00000000" || got.Members[0].MD5 != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("members = %+v", got.Members)
	}
	if got.CRC != "" || got.MD5 != "" || got.SHA1 != "" {
		t.Errorf("rom sums = %+v, want blank", got)
	}
}

func TestZipLargestMember(t *testing.T) {
	small, large := []byte("readme"), bytes.Repeat([]byte{0xEA}, 4096)
	raw := makeZip(t, zent{name: "readme.txt", data: small}, zent{name: "Game.nes", data: large, method: zip.Deflate}, zent{name: "Other.nes", data: bytes.Repeat([]byte{1}, 4096)})
	dir := t.TempDir()
	for _, name := range []string{"Game.nes.zip", "Game.pk3"} { // fs_extension "nes.zip"; zip content without .zip
		got, err := File(writeFile(t, dir, name, raw), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Members != nil {
			t.Errorf("%s: members %+v, want none", name, got.Members)
		}
		checkSums(t, got, large) // the first of the largest, in directory order
	}
}

// corruptCRC flips the stored crc32 of every entry, so the data reads in full and then fails.
func corruptCRC(raw []byte) []byte {
	out := bytes.Clone(raw)
	for i := 0; i+20 <= len(out); i++ {
		switch {
		case bytes.Equal(out[i:i+4], []byte("PK\x01\x02")):
			out[i+16] ^= 0xff
		case bytes.Equal(out[i:i+4], []byte("PK\x03\x04")):
			out[i+14] ^= 0xff
		}
	}
	return out
}

func TestZipBadCRC(t *testing.T) {
	data := []byte("member data that will fail its crc")
	raw := corruptCRC(makeZip(t, zent{name: "a.bin", data: data}))
	dir := t.TempDir()
	got, err := File(writeFile(t, dir, "bad.zip", raw), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, got, raw) // composite: ArchiveReadError, the raw bytes
	if got.Members != nil {
		t.Errorf("members %+v", got.Members)
	}
	got, err = File(writeFile(t, dir, "bad.nes.zip", raw), Limits{})
	if err == nil || !errors.Is(err, ErrNoHash) {
		t.Errorf("largest member with a bad crc: %+v, %v; want ErrNoHash", got, err)
	}
}

func TestZipUnsupportedMethods(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []uint16{methodDeflate64, methodLZMA} {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		fw, err := w.CreateRaw(&zip.FileHeader{Name: "a.bin", Method: m, CompressedSize64: 3, UncompressedSize64: 3})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte{1, 2, 3})
		w.Close()
		_, err = File(writeFile(t, dir, "m.zip", buf.Bytes()), Limits{})
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("method %d: err = %v, want ErrUnsupported", m, err)
		}
	}
	for _, name := range []string{"g.7z", "g.rar", "g.nes.7z"} {
		if _, err := File(writeFile(t, dir, name, []byte("7z\xbc\xaf\x27\x1cxxxx")), Limits{}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", name, err)
		}
	}
}

func TestZipNames(t *testing.T) {
	// Without the UTF-8 flag Python decodes cp437: byte 0x82 is "é", which sorts after "f".
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, n := range []string{"\x82.bin", "f.bin"} {
		fw, _ := w.CreateHeader(&zip.FileHeader{Name: n, NonUTF8: true})
		fw.Write([]byte(n))
	}
	// Info-ZIP Unicode Path: version 1, crc32 of the raw name, then the UTF-8 name.
	up := []byte{1, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(up[1:], crc32.ChecksumIEEE([]byte("raw.bin")))
	up = append(up, "ünicode.bin"...)
	extra := binary.LittleEndian.AppendUint16(nil, 0x7075)
	extra = binary.LittleEndian.AppendUint16(extra, uint16(len(up)))
	fw, _ := w.CreateHeader(&zip.FileHeader{Name: "raw.bin", NonUTF8: true, Extra: append(extra, up...)})
	fw.Write([]byte("u"))
	w.Close()
	got, err := File(writeFile(t, t.TempDir(), "n.zip", buf.Bytes()), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got.Members {
		names = append(names, m.Name)
	}
	if want := []string{"f.bin", "é.bin", "ünicode.bin"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	checkSums(t, got, []byte("f.bin\x82.binu"))
}

func TestTar(t *testing.T) {
	a, b := []byte("first member of the tar"), bytes.Repeat([]byte("second"), 1000)
	plain := makeTar(t, tent{name: "b.bin", data: b}, tent{name: "dir", typ: '5'}, tent{name: "link", typ: '2'}, tent{name: "a.bin", data: a})
	sorted := []Member{wantMember("a.bin", a), wantMember("b.bin", b)}
	for _, tc := range []struct {
		file    string
		raw     []byte
		members []Member
		bytes   []byte
	}{
		{"g.tar", plain, sorted, cat(a, b)},
		{"g.tar.gz", gz(t, plain), sorted, cat(a, b)},
		{"g.tgz", gz(t, plain), sorted, cat(a, b)},
		{"g.txz", gz(t, plain), sorted, cat(a, b)}, // tarfile "r:*" goes by content
		{"g.tar", []byte("not a tar at all"), nil, []byte("not a tar at all")},
		{"Game.gz", gz(t, plain), nil, b},                          // fs_extension "gz": read_gz_file, largest member
		{"Game.nes.gz", gz(t, a), nil, gz(t, a)},                   // a gzip that is no tar: ReadError, raw
		{"Game.nes.tar", plain, nil, b},                            // "nes.tar": read_tar_file, largest member
		{"Game.bin", plain, nil, b},                                // ustar magic: application/x-tar
		{"Game.bz2", bz2Hello, nil, []byte("hello hello hello\n")}, // decompressed stream
		{"Game.dat", bz2Hello, nil, []byte("hello hello hello\n")}, // application/x-bzip2 by magic
		{"Game.nes.bz2", bz2Hello[:30], nil, bz2Hello[:30]},        // truncated: nothing decoded, then raw
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := File(writeFile(t, t.TempDir(), tc.file, tc.raw), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Members, tc.members) {
				t.Errorf("members = %+v, want %+v", got.Members, tc.members)
			}
			checkSums(t, got, tc.bytes)
		})
	}
	if _, err := File(writeFile(t, t.TempDir(), "g.tar.xz", []byte("\xfd7zXZ\x00rest")), Limits{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("xz: err = %v, want ErrUnsupported", err)
	}
	// No regular member: RomM's max() fails.
	if _, err := File(writeFile(t, t.TempDir(), "g.nes.tar", makeTar(t, tent{name: "d", typ: '5'})), Limits{}); !errors.Is(err, ErrNoHash) {
		t.Errorf("no member: err = %v, want ErrNoHash", err)
	}
}

func TestBombs(t *testing.T) {
	zeros := make([]byte, 4<<20)
	small := Limits{MaxExpandedBytes: 1 << 20}
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		raw  []byte
		lim  Limits
	}{
		{"bomb.zip", makeZip(t, zent{name: "z", data: zeros, method: zip.Deflate}), small},
		{"bomb.nes.zip", makeZip(t, zent{name: "z", data: zeros, method: zip.Deflate}), small},
		{"bomb.tar.gz", gz(t, makeTar(t, tent{name: "z", data: zeros})), small},
		{"bomb.gz", gz(t, makeTar(t, tent{name: "z", data: zeros})), small},
		{"many.zip", makeZip(t, zent{name: "1"}, zent{name: "2"}, zent{name: "3"}), Limits{MaxMembers: 2}},
		{"many.tar", makeTar(t, tent{name: "1"}, tent{name: "2"}, tent{name: "3"}), Limits{MaxMembers: 2}},
		{"big.nes", make([]byte, 2048), Limits{MaxFileBytes: 1024}},
	} {
		_, err := File(writeFile(t, dir, tc.file, tc.raw), tc.lim)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: err = %v, want ErrTooLarge", tc.file, err)
		}
	}
	// A member that lies about its size: Go's reader stops one read past the declared size, so
	// the expansion stays bounded whatever the compressed data holds.
	lie := makeZip(t, zent{name: "z", data: zeros, method: zip.Deflate})
	for i := 0; i+30 <= len(lie); i++ {
		if bytes.Equal(lie[i:i+4], []byte("PK\x01\x02")) {
			binary.LittleEndian.PutUint32(lie[i+24:], 10)
		}
	}
	got, err := File(writeFile(t, dir, "lie.zip", lie), small)
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, got, lie) // unreadable in full: hashed raw, as RomM does
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := writeFile(t, t.TempDir(), "g.nes", []byte("data"))
	if _, err := FileContext(ctx, p, Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	p = writeFile(t, t.TempDir(), "g.zip", makeZip(t, zent{name: "a", data: []byte("x")}))
	if _, err := FileContext(ctx, p, Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("zip: err = %v, want context.Canceled", err)
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := File(dir, Limits{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("dir: err = %v", err)
	}
	if _, err := File(dir+"/missing.nes", Limits{}); err == nil {
		t.Error("missing file: no error")
	}
}
