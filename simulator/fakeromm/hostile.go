package fakeromm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// Hostile makes one ROM's answers what a broken or hostile RomM sends: the
// ROM's JSON verbatim, whatever it says (sizes that overflow, millions of
// files, names of EmulationStation's own files), and downloads that stream
// what the test wants (an endless body, a lying Content-Length). Everything
// else is answered as RomM does. Tests build ROM from ROMJSON, a real
// answer, so the shape around the lie is RomM's own.
type Hostile struct {
	// ROMID is the ROM whose answers are replaced.
	ROMID int
	// ROM answers GET /api/roms/{ROMID} (and /simple), status 200, as JSON.
	ROM []byte
	// Content answers the download of a file id of ROMID
	// (GET /api/roms/{ROMID}/content/…?file_ids=N); a file id not here is
	// a 404.
	Content map[int]HostileContent

	sent *atomic.Int64
}

// HostileContent is one file's download.
type HostileContent struct {
	// Data is sent first.
	Data []byte
	// Endless sends zero bytes after Data until the client goes away.
	Endless bool
	// Length, when positive, is the Content-Length header sent whatever
	// the body is; else the body goes chunked, without a length.
	Length int64
}

// SetHostile replaces the hostile ROM; Hostile{} turns it off.
func (s *Server) SetHostile(h Hostile) {
	s.init()
	h.sent = new(atomic.Int64)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostile = h
}

// HostileSent is how many body bytes the hostile ROM's downloads sent since
// SetHostile: an upper bound of what a client wrote.
func (s *Server) HostileSent() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hostile.sent == nil {
		return 0
	}
	return s.hostile.sent.Load()
}

// ROMJSON is the server's own answer to GET /api/roms/{id}, decoded, for a
// test to alter into a Hostile answer.
func (s *Server) ROMJSON(id int) (map[string]any, error) {
	s.init()
	req, err := http.NewRequest(http.MethodGet, "/api/roms/"+strconv.Itoa(id), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.opts.Token)
	rec := &recorder{header: http.Header{}}
	s.handler.ServeHTTP(rec, req)
	if rec.status != http.StatusOK {
		return nil, fmt.Errorf("fakeromm: ROM %d answered %d: %s", id, rec.status, rec.body.String())
	}
	var out map[string]any
	if err := json.Unmarshal(rec.body.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("fakeromm: ROM %d: %w", id, err)
	}
	return out, nil
}

// serveHostile answers r when it is for the hostile ROM, and reports
// whether it did.
func (s *Server) serveHostile(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	h := s.hostile
	s.mu.Unlock()
	if h.ROMID == 0 || r.Method != http.MethodGet || !s.authenticated(r) {
		return false
	}
	prefix := "/api/roms/" + strconv.Itoa(h.ROMID)
	rest, ok := strings.CutPrefix(r.URL.Path, prefix)
	switch {
	case !ok:
		return false
	case rest == "" || rest == "/" || rest == "/simple":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(h.ROM)))
		w.WriteHeader(http.StatusOK)
		w.Write(h.ROM)
		return true
	case strings.HasPrefix(rest, "/content/"):
		id, _ := strconv.Atoi(r.URL.Query().Get("file_ids"))
		c, ok := h.Content[id]
		if !ok {
			writeDetail(w, http.StatusNotFound, fmt.Sprintf("No files found for ROM %d", h.ROMID))
			return true
		}
		c.serve(w, r, h.sent)
		return true
	}
	return false
}

func (c HostileContent) serve(w http.ResponseWriter, r *http.Request, sent *atomic.Int64) {
	w.Header().Set("Content-Type", "application/octet-stream")
	if c.Length > 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(c.Length, 10))
	}
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		n, err := w.Write(b)
		sent.Add(int64(n))
		return err == nil && r.Context().Err() == nil
	}
	if len(c.Data) > 0 && !write(c.Data) {
		return
	}
	if !c.Endless {
		return
	}
	zeros := bytes.Repeat([]byte{0}, 256<<10)
	for write(zeros) {
	}
}
