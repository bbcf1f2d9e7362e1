package fakeromm

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestDownloads(t *testing.T) {
	s, base := newServer(t, Options{})
	alpha, _ := s.ROM(ROMAlphaQuest)
	tok := s.Token()

	// One file: itself, under its real name whatever the URL says.
	code, hdr, body := get(t, base, fmt.Sprintf("/api/roms/%d/content/anything.bin", alpha.ID), tok)
	if code != 200 || !bytes.Equal(body, alpha.Files[0].Bytes) ||
		!strings.Contains(hdr.Get("Content-Disposition"), `filename="Alpha%20Quest%20%28USA%29.nes"`) {
		t.Errorf("single file: %d, %d bytes, Content-Disposition %q", code, len(body), hdr.Get("Content-Disposition"))
	}
	// A resumed download.
	code, _, body = do(t, "GET", fmt.Sprintf("%s/api/roms/%d/content/x", base, alpha.ID), tok, http.Header{"Range": {"bytes=100-"}})
	if code != 206 || !bytes.Equal(body, alpha.Files[0].Bytes[100:]) {
		t.Errorf("range: %d, %d bytes", code, len(body))
	}
	code, hdr, body = do(t, "HEAD", fmt.Sprintf("%s/api/roms/%d/content/x", base, alpha.ID), tok, nil)
	if code != 200 || len(body) != 0 || hdr.Get("Content-Length") != fmt.Sprint(len(alpha.Files[0].Bytes)) {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %q", code, len(body), hdr.Get("Content-Length"))
	}
	// Several files: a zip named after {file_name}, with an .m3u of the cues.
	echo, _ := s.ROM(ROMEchoChamber)
	code, hdr, body = get(t, base, fmt.Sprintf("/api/roms/%d/content/%s", echo.ID, url.PathEscape(echo.FSName)), tok)
	if code != 200 || hdr.Get("Content-Type") != "application/zip" || !strings.Contains(hdr.Get("Content-Disposition"), "Echo%20Chamber%20%28USA%29.zip") {
		t.Fatalf("multi-file: %d %q %q", code, hdr.Get("Content-Type"), hdr.Get("Content-Disposition"))
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = b
	}
	for _, f := range echo.Files {
		if !bytes.Equal(got[f.FileName], f.Bytes) || digests(got[f.FileName]) != f.Hashes {
			t.Errorf("zip member %s does not match the RomFile", f.FileName)
		}
	}
	if m3u := string(got["Echo Chamber (USA).m3u"]); m3u != "Echo Chamber (USA) (Disc 1).cue\nEcho Chamber (USA) (Disc 2).cue" {
		t.Errorf("m3u %q", m3u)
	}
	// file_ids picks files; a RomFile id is what /files/content takes.
	code, _, body = get(t, base, fmt.Sprintf("/api/roms/%d/content/x?file_ids=%d", echo.ID, echo.Files[1].ID), tok)
	if code != 200 || !bytes.Equal(body, echo.Files[1].Bytes) {
		t.Errorf("file_ids: %d", code)
	}
	code, _, body = get(t, base, fmt.Sprintf("/api/roms/%d/files/content/whatever", echo.Files[3].ID), tok)
	if code != 200 || !bytes.Equal(body, echo.Files[3].Bytes) {
		t.Errorf("romfile content: %d", code)
	}
	for _, tc := range []struct {
		path string
		want int
	}{
		{fmt.Sprintf("/api/roms/%d/content/x", ROMIotaInvaders), 404}, // a row without a file
		{fmt.Sprintf("/api/roms/%d/content/x?file_ids=999", echo.ID), 404},
		{"/api/roms/999/content/x", 404},
		{fmt.Sprintf("/api/roms/%d/content/x", alpha.ID), 0}, // without a token: see below
	} {
		token := tok
		if tc.want == 0 {
			token, tc.want = "", 401
		}
		if code, _, body := get(t, base, tc.path, token); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.path, code, body, tc.want)
		}
	}
	fw := s.Firmware()[0]
	if code, _, body := get(t, base, fmt.Sprintf("/api/firmware/%d/content/%s", fw.ID, fw.FileName), tok); code != 200 || !bytes.Equal(body, fw.Bytes) {
		t.Errorf("firmware content: %d", code)
	}
}

func TestFaults(t *testing.T) {
	s, base := newServer(t, Options{})
	other := serve(t, &Server{})
	tok := s.Token()
	for _, tc := range []struct {
		name  string
		f     Faults
		check func(t *testing.T, code int, hdr http.Header, body []byte, err error)
	}{
		{"status 500", Faults{Status: 500}, func(t *testing.T, code int, hdr http.Header, body []byte, err error) {
			if code != 500 || string(body) != "Internal Server Error" {
				t.Errorf("%d %s", code, body)
			}
		}},
		{"status 502", Faults{Status: 502}, func(t *testing.T, code int, hdr http.Header, body []byte, err error) {
			if code != 502 || !strings.Contains(hdr.Get("Content-Type"), "text/html") {
				t.Errorf("%d %q", code, hdr.Get("Content-Type"))
			}
		}},
		{"html", Faults{HTML: true}, func(t *testing.T, code int, hdr http.Header, body []byte, err error) {
			if code != 200 || !bytes.HasPrefix(body, []byte("<!DOCTYPE html>")) {
				t.Errorf("%d %.40s", code, body)
			}
		}},
		{"truncated", Faults{Truncated: true}, func(t *testing.T, code int, hdr http.Header, body []byte, err error) {
			if err == nil {
				t.Errorf("read a truncated body without error: %d bytes", len(body))
			}
		}},
		{"huge", Faults{Huge: 8 << 20}, func(t *testing.T, code int, hdr http.Header, body []byte, err error) {
			if code != 200 || len(body) < 8<<20 || !bytes.HasSuffix(bytes.TrimSpace(body), []byte("}")) {
				t.Errorf("%d, %d bytes", code, len(body))
			}
		}},
		{"redirect", Faults{RedirectTo: other}, func(t *testing.T, code int, hdr http.Header, body []byte, err error) {
			if code != 302 || hdr.Get("Location") != other+"/api/roms?limit=1" {
				t.Errorf("%d Location %q", code, hdr.Get("Location"))
			}
		}},
		{"other path untouched", Faults{Path: "/api/platforms", Status: 503}, func(t *testing.T, code int, hdr http.Header, body []byte, err error) {
			if code != 200 {
				t.Errorf("%d", code)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.SetFaults(tc.f)
			defer s.SetFaults(Faults{})
			req, _ := http.NewRequest("GET", base+"/api/roms?limit=1", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Do(req)
			if err != nil {
				tc.check(t, 0, nil, nil, err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			tc.check(t, resp.StatusCode, resp.Header, body, err)
		})
	}
	t.Run("latency", func(t *testing.T) {
		s.SetFaults(Faults{Latency: 300 * time.Millisecond})
		defer s.SetFaults(Faults{})
		began := time.Now()
		get(t, base, "/api/heartbeat", "")
		if d := time.Since(began); d < 300*time.Millisecond {
			t.Errorf("answered after %s", d)
		}
	})
}

// TestCutAfterAndTimes: CutAfter sends the headers and that many bytes, then drops the
// connection; Times lets every request after the first Times through.
func TestCutAfterAndTimes(t *testing.T) {
	s, base := newServer(t, Options{})
	alpha, _ := s.ROM(ROMAlphaQuest)
	data := alpha.Files[0].Bytes
	path := fmt.Sprintf("/api/roms/%d/content/x", alpha.ID)
	s.SetFaults(Faults{Path: path, CutAfter: 1000, Times: 2})
	client := &http.Client{Timeout: 10 * time.Second}
	fetch := func(rng string) (int, []byte, error) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+s.Token())
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	for i, want := range []struct {
		rng    string
		status int
		body   []byte
		cut    bool
	}{
		{"", 200, data[:1000], true},
		{"bytes=1000-", 206, data[1000:2000], true},
		{"bytes=1000-", 206, data[1000:], false}, // past Times: untouched
	} {
		code, body, err := fetch(want.rng)
		if code != want.status || !bytes.Equal(body, want.body) || (err != nil) != want.cut {
			t.Errorf("request %d: %d, %d bytes, %v; want %d, %d bytes, cut %v", i, code, len(body), err, want.status, len(want.body), want.cut)
		}
	}
	// Other paths never count towards Times.
	s.SetFaults(Faults{Path: path, CutAfter: 10, Times: 1})
	if code, _, _ := get(t, base, "/api/heartbeat", ""); code != 200 {
		t.Errorf("heartbeat: %d", code)
	}
	if _, body, err := fetch(""); err == nil || len(body) != 10 {
		t.Errorf("first download after SetFaults: %d bytes, %v; want cut at 10", len(body), err)
	}
	// A body shorter than CutAfter goes out whole.
	s.SetFaults(Faults{Path: path, CutAfter: 1 << 20})
	if code, body, err := fetch(""); code != 200 || !bytes.Equal(body, data) || err != nil {
		t.Errorf("short body: %d, %d bytes, %v", code, len(body), err)
	}
}

// TestCovers: the identified fixture ROMs list covers at RomM's resources and the route serves
// them as PNG behind the download's token rules; the others list none.
func TestCovers(t *testing.T) {
	s, base := newServer(t, Options{})
	withCover := 0
	for _, r := range s.ROMs() {
		var rom struct {
			PathCoverLarge *string `json:"path_cover_large"`
			PathCoverSmall *string `json:"path_cover_small"`
		}
		getJSON(t, base, fmt.Sprintf("/api/roms/%d", r.ID), s.Token(), 200, &rom)
		img, has := s.Cover(r.ID)
		if rom.PathCoverLarge == nil || rom.PathCoverSmall == nil {
			t.Fatalf("ROM %d: null cover paths", r.ID)
		}
		if !has {
			if *rom.PathCoverLarge != "" || r.IGDBID != 0 {
				t.Errorf("ROM %d (igdb %d): path_cover_large %q without a cover", r.ID, r.IGDBID, *rom.PathCoverLarge)
			}
			continue
		}
		withCover++
		want := fmt.Sprintf("/assets/romm/resources/roms/%d/%d/cover/big.png?ts=2025-06-01 12:00:00+00:00", r.PlatformID, r.ID)
		if *rom.PathCoverLarge != want || *rom.PathCoverSmall != strings.Replace(want, "big", "small", 1) {
			t.Errorf("ROM %d: cover paths %q, %q; want %q", r.ID, *rom.PathCoverLarge, *rom.PathCoverSmall, want)
		}
		path, _, _ := strings.Cut(*rom.PathCoverLarge, "?")
		code, hdr, body := get(t, base, strings.ReplaceAll(path, " ", "%20"), s.Token())
		if code != 200 || hdr.Get("Content-Type") != "image/png" || !bytes.Equal(body, img) {
			t.Errorf("GET %s: %d %q, %d bytes", path, code, hdr.Get("Content-Type"), len(body))
		}
		if _, err := png.Decode(bytes.NewReader(body)); err != nil {
			t.Errorf("cover of ROM %d: %v", r.ID, err)
		}
		small, _ := strings.CutSuffix(path, "big.png")
		if code, _, body := get(t, base, small+"small.png", s.Token()); code != 200 || len(body) == 0 || bytes.Equal(body, img) {
			t.Errorf("small cover of ROM %d: %d, %d bytes", r.ID, code, len(body))
		}
		if code, _, _ := get(t, base, path, ""); code != 401 {
			t.Errorf("cover without a token: %d, want 401", code)
		}
	}
	if withCover == 0 {
		t.Fatal("no fixture ROM has a cover")
	}
	for _, p := range []string{
		fmt.Sprintf("/assets/romm/resources/roms/%d/%d/cover/big.png", PlatformSuperFamicom, ROMGammaGears), // unidentified
		fmt.Sprintf("/assets/romm/resources/roms/%d/%d/cover/big.png", PlatformSNES, ROMAlphaQuest),         // wrong platform
		fmt.Sprintf("/assets/romm/resources/roms/%d/%d/cover/huge.png", PlatformNES, ROMAlphaQuest),
		"/assets/romm/resources/roms/1/999/cover/big.png",
	} {
		if code, hdr, _ := get(t, base, p, s.Token()); code != 404 || !strings.Contains(hdr.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %q, want nginx's 404 page", p, code, hdr.Get("Content-Type"))
		}
	}
}
