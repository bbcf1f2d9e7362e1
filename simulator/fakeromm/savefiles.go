package fakeromm

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Where RomM keeps a save and what it calls it (the folder, the sanitized
// and datetime-tagged name, the name's parts, the content hash), the bytes
// of a generated save, and GET /api/saves/{id}/content that serves them.

// savesPath is build_saves_file_path for the fake's one user ("User:1" in hex).
func savesPath(fsSlug string, romID int, emulator string) string {
	p := fmt.Sprintf("users/557365723a31/saves/%s/%d", fsSlug, romID)
	if emulator != "" {
		p += "/" + emulator
	}
	return p
}

// namePatterns are RomM's file-name patterns, compiled when first used: the package is linked by
// the binary, whose start must not pay for them.
type namePatterns struct{ invalidHyphens, invalidEmpty, tag, ext, tagGroups *regexp.Regexp }

// A sync.Once and a zero value, not sync.OnceValue: nothing is allocated at init.
var (
	patternsOnce sync.Once
	patternsSet  namePatterns
)

func patterns() *namePatterns {
	patternsOnce.Do(func() {
		patternsSet = namePatterns{
			invalidHyphens: regexp.MustCompile(`[\\/:|]`),
			invalidEmpty:   regexp.MustCompile(`[*?"<>+]`),
			tag:            regexp.MustCompile(` \[\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}\]`),
			ext:            regexp.MustCompile(`\.(([a-z]+\.)*\w+)$`),
			tagGroups:      regexp.MustCompile(`(?:\s*(?:\([^)]*\)|\[[^]]*\]))+\s*$`),
		}
	})
	return &patternsSet
}

// sanitizeFilename is utils/filesystem.py sanitize_filename.
func sanitizeFilename(name string) (string, error) {
	name = name[strings.LastIndexByte(name, '/')+1:] // os.path.basename
	name = patterns().invalidHyphens.ReplaceAllString(name, "-")
	name = patterns().invalidEmpty.ReplaceAllString(name, "")
	name = strings.TrimSpace(strings.ReplaceAll(name, "\x00", ""))
	if name == "" || name == "." || name == ".." {
		return "", errors.New("Filename cannot be empty after sanitization")
	}
	return name, nil
}

// pySplitext is os.path.splitext: the last dot of the base name that is
// not one of its leading dots.
func pySplitext(name string) (string, string) {
	base := name[strings.LastIndexByte(name, '/')+1:]
	lead := len(base) - len(strings.TrimLeft(base, "."))
	i := strings.LastIndexByte(base[lead:], '.')
	if i < 0 {
		return name, ""
	}
	cut := len(name) - len(base) + lead + i
	return name[:cut], name[cut:]
}

// datetimeTag is _apply_datetime_tag: " [YYYY-MM-DD_HH-MM-SS]" (UTC) before
// the extension, replacing a tag already there.
func datetimeTag(name string, now time.Time) string {
	stem, ext := pySplitext(name)
	stem = patterns().tag.ReplaceAllString(stem, "")
	return stem + " [" + now.UTC().Format("2006-01-02_15-04-05") + "]" + ext
}

// fileNameParts are compute_file_name_parts: no_tags, no_ext, extension.
func fileNameParts(name string) (noTags, noExt, ext string) {
	noExt = strings.TrimSpace(patterns().ext.ReplaceAllString(name, ""))
	noTags = strings.TrimSpace(patterns().tagGroups.ReplaceAllString(noExt, ""))
	if m := patterns().ext.FindStringSubmatch(name); m != nil {
		ext = m[1]
	}
	return noTags, noExt, ext
}

// contentHash is compute_content_hash: the MD5 of the bytes, or for a zip
// the MD5 of the sorted "name:md5" lines of its files.
func contentHash(b []byte) string {
	if zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b))); err == nil {
		if h, ok := zipHash(zr); ok {
			return h
		}
	}
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func zipHash(zr *zip.Reader) (string, bool) {
	var lines []string
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return "", false
		}
		h := md5.New()
		_, err = io.Copy(h, io.LimitReader(rc, maxSaveUpload))
		rc.Close()
		if err != nil {
			return "", false
		}
		lines = append(lines, f.Name+":"+hex.EncodeToString(h.Sum(nil)))
	}
	sort.Strings(lines)
	sum := md5.Sum([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:]), true
}

// generated is a generated save's content: byte i is i mod 251.
type generated struct {
	size, off int64
}

func (g *generated) Read(p []byte) (int, error) {
	if g.off >= g.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), g.size-g.off))
	for i := range n {
		p[i] = byte((g.off + int64(i)) % 251)
	}
	g.off += int64(n)
	return n, nil
}

func (g *generated) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += g.off
	case io.SeekEnd:
		off += g.size
	}
	if off < 0 {
		return 0, errors.New("fakeromm: seek before the start")
	}
	g.off = off
	return off, nil
}

// GeneratedSaveByte is byte i of a generated save, for a test to check
// what it got.
func GeneratedSaveByte(i int64) byte { return byte(i % 251) }

// saveContent is GET /api/saves/{id}/content: Starlette's FileResponse of
// the stored file. With a device and optimistic (the default) the download
// itself marks the save synced; session_id counts it in the session.
func (s *Server) saveContent(c *call) {
	id := c.p.pathInt("id", c.vars["id"], false)
	deviceID, _ := c.p.str("device_id")
	sessionID, _ := c.p.integer("session_id", 0, nil, nil)
	optimistic, _ := c.p.boolean("optimistic", true)
	if !c.ready(ScopeAssetsRead) {
		return
	}
	who, _ := s.caller(c.r)
	s.state.mu.Lock()
	dev, ok := s.resolveDevice(c, who, deviceID, ScopeDevicesRead)
	if !ok {
		s.state.mu.Unlock()
		return
	}
	r := s.state.saves.row(id, ownerID)
	if r == nil {
		s.state.mu.Unlock()
		saveNotFound(c, id)
		return
	}
	if dev != nil && optimistic {
		s.state.saves.upsertSync(dev.ID, r.id, r.updatedAt)
		dev.LastSeen = s.now()
	}
	if sessionID != 0 {
		s.state.saves.countCompleted(sessionID, ownerID)
	}
	name, content, gen, mod := r.fileName, r.content, r.generated, r.updatedAt
	s.state.mu.Unlock()

	c.w.Header().Set("Content-Type", fileResponseType(name))
	c.w.Header().Set("Content-Disposition", contentDisposition(name))
	if gen > 0 {
		http.ServeContent(c.w, c.r, "", mod, &generated{size: gen})
		return
	}
	http.ServeContent(c.w, c.r, "", mod, bytes.NewReader(content))
}

// fileResponseType is the media type FileResponse guesses from the name
// (Python's mimetypes, for the names saves have), "text/plain" otherwise,
// with the charset Starlette adds to text types.
func fileResponseType(name string) string {
	_, ext := pySplitext(name)
	switch strings.ToLower(ext) {
	case ".zip":
		return "application/zip"
	case ".bin":
		return "application/octet-stream"
	case ".png":
		return "image/png"
	case ".json":
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// contentDisposition is Starlette's: filename="…" when quoting changes
// nothing, else filename*=utf-8”<quoted>.
func contentDisposition(name string) string {
	q := pyQuote(name)
	if q != name {
		return "attachment; filename*=utf-8''" + q
	}
	return `attachment; filename="` + name + `"`
}

// pyQuote is urllib.parse.quote with its default safe "/".
func pyQuote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_.-~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
