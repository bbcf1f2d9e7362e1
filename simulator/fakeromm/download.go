package fakeromm

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
)

// romContent is GET|HEAD /api/roms/{id}/content/{file_name}
// (endpoints/roms/__init__.py get_rom_content, DEV_MODE branch, which is
// what FastAPI itself serves): the ROM's files, or those named by
// ?file_ids=; one file as itself under its real name whatever {file_name}
// says, several as a zip named {file_name}.zip with an .m3u added that
// lists the .cue files (else all files). Ranges are honoured, as nginx
// honours them in front of a real RomM.
func (s *Server) romContent(c *call) {
	fileIDs, _ := c.p.str("file_ids")
	r, ok := s.romByID(c, ScopeRomsRead)
	if !ok {
		return
	}
	files := r.Files
	if fileIDs != "" {
		want := map[int]bool{}
		for _, part := range strings.Split(fileIDs, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			n, err := strconv.Atoi(part)
			if err != nil {
				// RomM's int() raises here, which is a 500; say what is wrong instead.
				writeDetail(c.w, http.StatusBadRequest, fmt.Sprintf("file_ids must be comma-separated integers, got %q", part))
				return
			}
			want[n] = true
		}
		var picked []File
		for _, f := range files {
			if want[f.ID] {
				picked = append(picked, f)
			}
		}
		files = picked
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].FileName < files[j].FileName })
	if len(files) == 0 {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("No files found for ROM %d", r.ID))
		return
	}
	if r.MissingFromFS {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("File %s not found on disk for ROM %d", files[0].FileName, r.ID))
		return
	}
	if len(files) == 1 {
		serveBytes(c, files[0].FileName, "application/octet-stream", files[0].Bytes)
		return
	}
	name := c.vars["file_name"]
	z, err := downloadZip(r, files)
	if err != nil {
		writeDetail(c.w, http.StatusInternalServerError, err.Error())
		return
	}
	serveBytes(c, name+".zip", "application/zip", z)
}

// romFileContent is GET /api/roms/{id}/files/content/{file_name}, where id
// is a RomFile id (endpoints/roms/files.py), not a ROM id.
func (s *Server) romFileContent(c *call) {
	id := c.p.pathInt("id", c.vars["id"], false)
	if !c.ready(ScopeRomsRead) {
		return
	}
	f, r, ok := s.lib.file(id)
	if !ok || r.MissingFromFS {
		writeDetail(c.w, http.StatusNotFound, "File not found")
		return
	}
	serveBytes(c, f.FileName, "application/octet-stream", f.Bytes)
}

func (s *Server) firmwareContent(c *call) {
	if f, ok := s.firmwareByID(c); ok {
		serveBytes(c, f.FileName, "application/octet-stream", f.Bytes)
	}
}

// serveBytes answers with Content-Disposition as RomM writes it, and
// leaves Range, If-Range and HEAD to http.ServeContent.
func serveBytes(c *call, name, ctype string, data []byte) {
	q := url.PathEscape(name)
	c.w.Header().Set("Content-Type", ctype)
	c.w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename*=UTF-8''%s; filename=\"%s\"", q, q))
	http.ServeContent(c.w, c.r, "", zipTime, bytes.NewReader(data))
}

// downloadZip is the multi-file download: entries are the paths relative
// to the ROM folder, deflated, plus "<fs_name>.m3u" unless the ROM has one.
func downloadZip(r ROM, files []File) ([]byte, error) {
	var entries []zipEntry
	var cues, all []string
	hasM3U := false
	for _, f := range files {
		// file_name_for_download: the path below the ROM's folder (the
		// file_path of its top-level files).
		rel := f.FileName
		for _, top := range r.Files {
			if top.TopLevel {
				rel = strings.TrimPrefix(f.FullPath(), top.FilePath+"/")
				break
			}
		}
		entries = append(entries, zipEntry{rel, f.Bytes})
		all = append(all, rel)
		if strings.EqualFold(path.Ext(f.FileName), ".cue") {
			cues = append(cues, rel)
		}
		if strings.EqualFold(path.Ext(f.FileName), ".m3u") {
			hasM3U = true
		}
	}
	if !hasM3U {
		list := all
		if len(cues) > 0 {
			list = cues
		}
		entries = append(entries, zipEntry{r.FSName + ".m3u", []byte(strings.Join(list, "\n"))})
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		method := zip.Deflate
		if len(e.data) == 0 || strings.HasSuffix(e.name, ".m3u") {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: method, Modified: zipTime})
		if err != nil {
			return nil, fmt.Errorf("download zip: %w", err)
		}
		if _, err := w.Write(e.data); err != nil {
			return nil, fmt.Errorf("download zip: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("download zip: %w", err)
	}
	return buf.Bytes(), nil
}
