package romm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/prism"
)

// tempDst is an empty file to download into, holding prefix.
func tempDst(t *testing.T, prefix []byte) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "part"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(prefix); err != nil {
		t.Fatal(err)
	}
	return f
}

func contents(t *testing.T, f *os.File) []byte {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sleeps records the backoffs DownloadFile asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>9)
	}
	return b
}

// contentRequests are the fake RomM's recorded downloads of ROM id.
func contentRequests(fake *fakeromm.Server, id int) []fakeromm.Request {
	var out []fakeromm.Request
	for _, r := range fake.Requests() {
		if strings.HasPrefix(r.Path, fmt.Sprintf("/api/roms/%d/content/", id)) {
			out = append(out, r)
		}
	}
	return out
}

// statuses waits until the fake has recorded the status of every download of ROM id
// (it records once the handler returns, which may be after the client read the answer) and
// returns them.
func statuses(t *testing.T, fake *fakeromm.Server, id int) []int {
	t.Helper()
	var out []int
	cabinettest.Await(t, "the fake to record every download's status", nil, func() (bool, string) {
		out = nil
		done := true
		for _, r := range contentRequests(fake, id) {
			out = append(out, r.Status)
			done = done && r.Status != 0
		}
		return done, fmt.Sprintf("statuses %v", out)
	})
	return out
}

// romFile is the fake's fixture ROM id and its first file as the client reads it.
func romFile(t *testing.T, c *Client, id int) (ROM, File) {
	t.Helper()
	r, err := c.ROM(context.Background(), id)
	if err != nil || len(r.Files) == 0 {
		t.Fatalf("ROM(%d) = %+v, %v", id, r, err)
	}
	return r, r.Files[0]
}

// TestDownloadFromFakeRomM downloads every file of the fixture whole.
func TestDownloadFromFakeRomM(t *testing.T) {
	fake, c := startFakeRomM(t, fakeromm.Options{})
	for _, want := range fake.ROMs() {
		if want.MissingFromFS {
			continue
		}
		for i, wf := range want.Files {
			t.Run(fmt.Sprintf("%d/%s", want.ID, wf.FileName), func(t *testing.T) {
				r, err := c.ROM(context.Background(), want.ID)
				if err != nil {
					t.Fatal(err)
				}
				f := r.Files[i]
				dst := tempDst(t, nil)
				var last [2]int64
				n, err := c.DownloadFile(context.Background(), r.ID, f, dst, DownloadOptions{Progress: func(done, total int64) { last = [2]int64{done, total} }})
				if err != nil || n != int64(len(wf.Bytes)) {
					t.Fatalf("DownloadFile = %d, %v; want %d bytes", n, err, len(wf.Bytes))
				}
				if got := contents(t, dst); !bytes.Equal(got, wf.Bytes) {
					t.Errorf("downloaded %d bytes that differ from the fixture's %d", len(got), len(wf.Bytes))
				}
				if last != [2]int64{n, n} {
					t.Errorf("last progress %v, want [%d %d]", last, n, n)
				}
				st := statuses(t, fake, r.ID)
				reqs := contentRequests(fake, r.ID)
				got := reqs[len(reqs)-1]
				if got.Query.Get("file_ids") != strconv.Itoa(f.ID) || !got.Authorized || st[len(st)-1] != 200 {
					t.Errorf("request %+v, status %v; want file_ids=%d, the token, 200", got, st, f.ID)
				}
			})
		}
	}
}

// TestDownloadRequest: the exact request, with a file name that needs escaping.
func TestDownloadRequest(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	data := payload(3000)
	const name = "Alpha Quest (USA) #1 ?50%.nes"
	path := "/api/roms/7/content/" + name
	f.route(path, func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	})
	c := newClient(t, srv.URL)
	dst := tempDst(t, data[:1000])
	n, err := c.DownloadFile(context.Background(), 7, File{ID: 42, Name: name, SizeBytes: 3000}, dst, DownloadOptions{})
	if err != nil || n != 3000 || !bytes.Equal(contents(t, dst), data) {
		t.Fatalf("DownloadFile = %d, %v", n, err)
	}
	r := f.last(path)
	for k, want := range map[string]string{"Authorization": "Bearer " + testToken, "Range": "bytes=1000-", "Accept-Encoding": "identity"} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if r.URL.RawQuery != "file_ids=42" {
		t.Errorf("query %q, want file_ids=42", r.URL.RawQuery)
	}
}

// TestDownloadResumesAfterCut: the fake drops the first download at half the file; the second
// request asks for the rest with a Range and gets a 206.
func TestDownloadResumesAfterCut(t *testing.T) {
	fake, c := startFakeRomM(t, fakeromm.Options{})
	r, f := romFile(t, c, fakeromm.ROMAlphaQuest)
	want, _ := fake.ROM(r.ID)
	fake.SetFaults(fakeromm.Faults{Path: fmt.Sprintf("/api/roms/%d/content/", r.ID), CutAfter: f.SizeBytes / 2, Times: 1})
	var s sleeps
	dst := tempDst(t, nil)
	n, err := c.DownloadFile(context.Background(), r.ID, f, dst, DownloadOptions{Sleep: s.sleep})
	if err != nil || n != f.SizeBytes {
		t.Fatalf("DownloadFile = %d, %v; want %d", n, err, f.SizeBytes)
	}
	if !bytes.Equal(contents(t, dst), want.Files[0].Bytes) {
		t.Error("the resumed file differs from the fixture's")
	}
	if got := statuses(t, fake, r.ID); fmt.Sprint(got) != "[200 206]" {
		t.Errorf("statuses %v, want [200 206] (a cut download, then its Range)", got)
	}
	if got := s.got(); fmt.Sprint(got) != "[250ms]" {
		t.Errorf("backoffs %v, want [250ms]", got)
	}
}

// TestDownloadRetries: attempts that fail without a byte back off 250 ms doubling to 5 s and give
// up after MaxRetries; an attempt that got bytes starts the count again.
func TestDownloadRetries(t *testing.T) {
	data := payload(10000)
	for _, tt := range []struct {
		name     string
		fail     int   // requests that break
		progress int64 // bytes each breaking request sends (0: headers only)
		retries  int
		wantErr  bool
		backoffs string
	}{
		{"three drops then whole", 3, 0, 0, false, "[250ms 500ms 1s]"},
		{"gives up after five retries", 100, 0, 0, true, "[250ms 500ms 1s 2s 4s]"},
		{"caps at 5 s", 100, 0, 8, true, "[250ms 500ms 1s 2s 4s 5s 5s 5s]"},
		{"progress resets the count", 8, 1000, 0, false, "[250ms 250ms 250ms 250ms 250ms 250ms 250ms 250ms]"},
		{"no retries", 100, 0, -1, true, "[]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			var n atomic.Int32
			f.route("/api/roms/1/content/x.bin", func(w http.ResponseWriter, r *http.Request) {
				if int(n.Add(1)) > tt.fail {
					http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
					return
				}
				start := 0
				if rg := r.Header.Get("Range"); rg != "" {
					start, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
					w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(data)-1, len(data)))
					w.Header().Set("Content-Length", strconv.Itoa(len(data)-start))
					w.WriteHeader(206)
				} else {
					w.Header().Set("Content-Length", strconv.Itoa(len(data)))
				}
				w.Write(data[start:min(len(data), start+int(tt.progress))])
				w.(http.Flusher).Flush()
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
			})
			c := newClient(t, srv.URL)
			var s sleeps
			dst := tempDst(t, nil)
			got, err := c.DownloadFile(context.Background(), 1, File{ID: 1, Name: "x.bin", SizeBytes: int64(len(data))}, dst,
				DownloadOptions{Sleep: s.sleep, MaxRetries: tt.retries})
			if fmt.Sprint(s.got()) != tt.backoffs {
				t.Errorf("backoffs %v, want %s", s.got(), tt.backoffs)
			}
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "broke off") {
					t.Fatalf("DownloadFile = %d, %v; want it to give up", got, err)
				}
				if tt.retries >= 0 && !strings.Contains(err.Error(), "times in a row") {
					t.Errorf("error %q does not say how often it tried", err)
				}
				return
			}
			if err != nil || !bytes.Equal(contents(t, dst), data) {
				t.Fatalf("DownloadFile = %d, %v", got, err)
			}
		})
	}
}

// TestDownloadRangeAnswers: RomM (or a proxy) answering a resume with the whole file, a 416 for a
// file that is complete, and a 416 for a partial file longer than RomM's.
func TestDownloadRangeAnswers(t *testing.T) {
	data := payload(5000)
	whole := func(w http.ResponseWriter, r *http.Request) { // ignores Range, as some proxies do
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
	}
	ranged := func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}
	for _, tt := range []struct {
		name     string
		handler  http.HandlerFunc
		prefix   []byte
		size     int64
		statuses string // what the handler answered, in order
	}{
		{"200 to a Range starts again", whole, []byte("not the file's first bytes"), 5000, "[200]"},
		{"416 at complete", ranged, data, 5000, "[416]"},
		{"416 at complete, size unknown", ranged, data, 0, "[416]"},
		{"partial longer than the unknown size", ranged, append(append([]byte(nil), data...), "more"...), 0, "[416 200]"},
		{"partial longer than the listed size", ranged, append(append([]byte(nil), data...), "more"...), 5000, "[200]"},
		{"resume", ranged, data[:4000], 5000, "[206]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			var mu sync.Mutex
			var got []int
			f.route("/api/roms/1/content/x.bin", func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				tt.handler(rec, r)
				mu.Lock()
				got = append(got, rec.Code)
				mu.Unlock()
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
			})
			c := newClient(t, srv.URL)
			dst := tempDst(t, tt.prefix)
			n, err := c.DownloadFile(context.Background(), 1, File{ID: 1, Name: "x.bin", SizeBytes: tt.size}, dst, DownloadOptions{Sleep: (&sleeps{}).sleep})
			if err != nil || n != 5000 || !bytes.Equal(contents(t, dst), data) {
				t.Fatalf("DownloadFile = %d, %v; file %d bytes", n, err, len(contents(t, dst)))
			}
			if fmt.Sprint(got) != tt.statuses {
				t.Errorf("answers %v, want %s", got, tt.statuses)
			}
		})
	}
}

// TestDownloadRefuses: answers that are not the file, with what is left in dst.
func TestDownloadRefuses(t *testing.T) {
	data := payload(5000)
	login := "<!DOCTYPE html><html><body><form><input name=password></form></body></html>"
	stream := func(b []byte) http.HandlerFunc { // chunked: no Content-Length to refuse up front
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			for i := 0; i < len(b); i += 1000 {
				w.Write(b[i:min(len(b), i+1000)])
				w.(http.Flusher).Flush()
			}
		}
	}
	for _, tt := range []struct {
		name     string
		handler  http.HandlerFunc
		prefix   []byte
		size     int64
		maxBytes int64
		sentinel error
		msg      string
		left     int // bytes in dst afterwards
	}{
		{"Content-Length over the listed size", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5001")
			w.Write(append(append([]byte(nil), data...), 0))
		}, nil, 5000, 0, ErrBadData, "more than the 5000 bytes it lists for x.bin", 0},
		{"stream over the listed size", stream(payload(9000)), nil, 5000, 0, ErrBadData, "more than the 5000 bytes it lists for x.bin", 5000},
		{"stream over MaxBytes", stream(payload(9000)), nil, 0, 3000, ErrTooLarge, "more than the", 3000},
		{"Content-Length under the listed size", func(w http.ResponseWriter, r *http.Request) {
			w.Write(data[:10])
		}, nil, 5000, 0, ErrBadData, "not the 5000 it lists", 0},
		{"html page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, login)
		}, data[:100], 5000, 0, ErrNotRomM, "not RomM's file", 100},
		{"html page sent as a file", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			io.WriteString(w, login)
		}, nil, 0, 0, ErrNotRomM, "not RomM's file", 0},
		{"404", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 404, map[string]any{"detail": "File not found"})
		}, data[:100], 5000, 0, ErrNotFound, "RomM has no file x.bin for ROM 1 any more: search again", 100},
		{"401", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 401, map[string]any{"detail": "Not authenticated"})
		}, nil, 5000, 0, ErrUnauthorized, "client token", 0},
		{"403 on 5.3", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 403, map[string]any{"detail": "Forbidden"})
		}, nil, 5000, 0, ErrMissingScope, "roms.read", 0},
		{"login page with 401", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(401)
			io.WriteString(w, login)
		}, nil, 5000, 0, ErrNotRomM, "login or error page", 0},
		{"a range that was not asked for", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-4999/5000")
			w.WriteHeader(206)
			w.Write(data)
		}, data[:100], 5000, 0, ErrBadData, "another range", 100},
		{"a range of another size", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 100-5999/6000")
			w.WriteHeader(206)
			w.Write(payload(5900))
		}, data[:100], 5000, 0, ErrBadData, "changed in RomM", 100},
		{"500", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, map[string]any{"detail": "boom"})
		}, nil, 5000, 0, nil, "RomM failed", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			f.route("/api/roms/1/content/x.bin", tt.handler)
			c := newClient(t, srv.URL)
			dst := tempDst(t, tt.prefix)
			var s sleeps
			n, err := c.DownloadFile(context.Background(), 1, File{ID: 1, Name: "x.bin", SizeBytes: tt.size}, dst,
				DownloadOptions{MaxBytes: tt.maxBytes, Sleep: s.sleep})
			mustErr(t, err, tt.sentinel)
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q, want it to say %q", err, tt.msg)
			}
			if got := len(contents(t, dst)); got != tt.left || n != int64(got) {
				t.Errorf("dst holds %d bytes, DownloadFile said %d; want %d", got, n, tt.left)
			}
			if len(s.got()) != 0 || f.count("/api/roms/1/content/x.bin") != 1 {
				t.Errorf("retried %d times (%d requests): nothing here is worth a retry", len(s.got()), f.count("/api/roms/1/content/x.bin"))
			}
		})
	}
}

// TestDownloadAgainstFakeRomMRefusals: the fake's 404s, 401 and HTML portal.
func TestDownloadAgainstFakeRomMRefusals(t *testing.T) {
	fake, c := startFakeRomM(t, fakeromm.Options{})
	ctx := context.Background()
	iota, f := romFile(t, c, fakeromm.ROMIotaInvaders) // a row without a file
	_, err := c.DownloadFile(ctx, iota.ID, f, tempDst(t, nil), DownloadOptions{})
	mustErr(t, err, ErrNotFound)
	if want := fmt.Sprintf("RomM has no file %s for ROM %d any more: search again", f.Name, iota.ID); err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	alpha, f := romFile(t, c, fakeromm.ROMAlphaQuest)
	_, err = c.DownloadFile(ctx, alpha.ID, File{ID: 9999, Name: f.Name, SizeBytes: f.SizeBytes}, tempDst(t, nil), DownloadOptions{})
	mustErr(t, err, ErrNotFound)

	fake.SetFaults(fakeromm.Faults{Path: "/api/roms/1/content", HTML: true})
	_, err = c.DownloadFile(ctx, alpha.ID, f, tempDst(t, nil), DownloadOptions{})
	mustErr(t, err, ErrNotRomM)
	fake.SetFaults(fakeromm.Faults{})

	fake.Revoke()
	_, err = c.DownloadFile(ctx, alpha.ID, f, tempDst(t, nil), DownloadOptions{})
	mustErr(t, err, ErrUnauthorized)
	fake.Restore()

	_, limited := startFakeRomM(t, fakeromm.Options{Scopes: []string{fakeromm.ScopePlatformsRead}})
	_, err = limited.DownloadFile(ctx, alpha.ID, f, tempDst(t, nil), DownloadOptions{})
	mustErr(t, err, ErrMissingScope)
}

// stallingFile sends the first half of data and then nothing until the client goes away (the
// first stalls requests); later requests get the rest by Range.
func stallingFile(t *testing.T, data []byte, stalls int, sent chan<- struct{}) http.HandlerFunc {
	var n atomic.Int32
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(w http.ResponseWriter, r *http.Request) {
		if int(n.Add(1)) > stalls {
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		if sent != nil {
			sent <- struct{}{}
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

// TestDownloadIdleTimeout: a server that stalls mid-body loses the attempt after IdleTimeout, and
// the download resumes where it stopped.
func TestDownloadIdleTimeout(t *testing.T) {
	data := payload(600 << 10)
	f, srv := newFake(t, "5.3.1")
	f.route("/api/roms/1/content/x.bin", stallingFile(t, data, 1, nil))
	c := newClient(t, srv.URL)
	var s sleeps
	dst := tempDst(t, nil)
	n, err := c.DownloadFile(context.Background(), 1, File{ID: 1, Name: "x.bin", SizeBytes: int64(len(data))}, dst,
		DownloadOptions{IdleTimeout: 100 * time.Millisecond, Sleep: s.sleep})
	if err != nil || n != int64(len(data)) || !bytes.Equal(contents(t, dst), data) {
		t.Fatalf("DownloadFile = %d, %v", n, err)
	}
	if got := f.last("/api/roms/1/content/x.bin").Header.Get("Range"); got != fmt.Sprintf("bytes=%d-", len(data)/2) {
		t.Errorf("resumed with Range %q, want from byte %d", got, len(data)/2)
	}
	if fmt.Sprint(s.got()) != "[250ms]" {
		t.Errorf("backoffs %v", s.got())
	}

	// Stalling every time: it gives up, saying so.
	f.route("/api/roms/2/content/x.bin", stallingFile(t, data, 100, nil))
	dst = tempDst(t, nil)
	n, err = c.DownloadFile(context.Background(), 2, File{ID: 1, Name: "x.bin", SizeBytes: int64(len(data))}, dst,
		DownloadOptions{IdleTimeout: 50 * time.Millisecond, MaxRetries: 2, Sleep: (&sleeps{}).sleep})
	mustErr(t, err, context.DeadlineExceeded)
	if !strings.Contains(err.Error(), "sent nothing for 50ms") || n != int64(len(data)/2) {
		t.Errorf("DownloadFile = %d, %v", n, err)
	}
}

// TestDownloadCancel: cancelling ctx mid-body stops at once, keeps what was written, and does not
// retry.
func TestDownloadCancel(t *testing.T) {
	data := payload(1 << 20)
	f, srv := newFake(t, "5.3.1")
	f.route("/api/roms/1/content/x.bin", stallingFile(t, data, 100, nil))
	c := newClient(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dst := tempDst(t, nil)
	var s sleeps
	n, err := c.DownloadFile(ctx, 1, File{ID: 1, Name: "x.bin", SizeBytes: int64(len(data))}, dst, DownloadOptions{
		Sleep:    s.sleep,
		Progress: func(done, total int64) { cancel() }, // after the first 256 KiB are written
	})
	mustErr(t, err, context.Canceled)
	if got := int64(len(contents(t, dst))); n == 0 || n != got || n > int64(len(data)/2) {
		t.Errorf("DownloadFile = %d; dst holds %d", n, got)
	}
	if len(s.got()) != 0 || f.count("/api/roms/1/content/x.bin") != 1 {
		t.Errorf("retried after a cancel: %v", s.got())
	}

	// Cancelled while waiting for the answer.
	sent := make(chan struct{}, 1)
	f.route("/api/roms/2/content/x.bin", stallingFile(t, data, 100, sent))
	ctx, cancel = context.WithCancel(context.Background())
	go func() { <-sent; cancel() }()
	_, err = c.DownloadFile(ctx, 2, File{ID: 1, Name: "x.bin"}, tempDst(t, nil), DownloadOptions{Sleep: s.sleep})
	mustErr(t, err, context.Canceled)
}

// TestDownloadLargeFile moves 10 MiB over loopback, cut once at half, and checks the bytes, the
// progress calls and the request count.
func TestDownloadLargeFile(t *testing.T) {
	data := payload(10 << 20)
	f, srv := newFake(t, "5.3.1")
	var n atomic.Int32
	f.route("/api/roms/3/content/big.iso", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data[:len(data)/2])
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	})
	c := newClient(t, srv.URL)
	dst := tempDst(t, nil)
	var calls int
	var prev int64
	began := time.Now()
	got, err := c.DownloadFile(context.Background(), 3, File{ID: 5, Name: "big.iso", SizeBytes: int64(len(data))}, dst, DownloadOptions{
		Sleep: (&sleeps{}).sleep,
		Progress: func(done, total int64) {
			calls++
			if done < prev || total != int64(len(data)) {
				t.Errorf("progress %d/%d after %d", done, total, prev)
			}
			prev = done
		},
	})
	if err != nil || got != int64(len(data)) {
		t.Fatalf("DownloadFile = %d, %v", got, err)
	}
	t.Logf("10 MiB in %s", time.Since(began))
	if a, b := sha256.Sum256(contents(t, dst)), sha256.Sum256(data); a != b {
		t.Error("the 10 MiB differ")
	}
	if max := len(data)/flushAt + 2; calls < 10 || calls > max {
		t.Errorf("%d progress calls, want 10..%d (about one per 256 KiB)", calls, max)
	}
	if n.Load() != 2 {
		t.Errorf("%d requests, want 2", n.Load())
	}
}

func TestDownloadRefusesBadArguments(t *testing.T) {
	_, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	for _, tt := range []struct {
		rom int
		f   File
		dst *os.File
	}{
		{0, File{ID: 1, Name: "x"}, tempDst(t, nil)},
		{1, File{ID: 0, Name: "x"}, tempDst(t, nil)},
		{1, File{ID: 1, Name: "x", SizeBytes: -1}, tempDst(t, nil)},
		{1, File{ID: 1, Name: "x"}, nil},
	} {
		_, err := c.DownloadFile(context.Background(), tt.rom, tt.f, tt.dst, DownloadOptions{})
		mustErr(t, err, ErrInvalid)
	}
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCover: both path forms, the types it takes, and what it refuses.
func TestCover(t *testing.T) {
	pngData, jpegData := pngBytes(t), jpegBytes(t)
	const asset = "/assets/romm/resources/roms/1/356/cover/big.png"
	serve := func(ct string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			} else {
				w.Header()["Content-Type"] = nil
			}
			w.Write(body)
		}
	}
	for _, tt := range []struct {
		name     string
		prefix   string // RomM behind a path prefix
		cover    string
		handler  http.HandlerFunc
		sentinel error  // nil: success
		wantType string // on success
		noReq    bool   // refused before any request
	}{
		{"rooted", "", asset + "?ts=2024-01-01 10:00:00", serve("image/png", pngData), nil, "image/png", false},
		{"relative", "", "roms/1/356/cover/big.png?ts=2024-01-01 10:00:00+00:00", serve("image/png", pngData), nil, "image/png", false},
		{"under a prefix", "/romm", asset + "?ts=2024-01-01 10:00:00", serve("image/png", pngData), nil, "image/png", false},
		{"jpeg in a png", "", asset, serve("image/png", jpegData), nil, "image/jpeg", false},
		{"no type, sniffed", "", asset, serve("", pngData), nil, "image/png", false},
		{"webp", "", asset, serve("image/webp", []byte("RIFF\x00\x00\x00\x00WEBPVP8 ")), ErrBadData, "", false},
		{"text", "", asset, serve("text/plain", pngData), ErrBadData, "", false},
		{"not an image", "", asset, serve("image/png", []byte("hello, this is not a png")), ErrBadData, "", false},
		{"html", "", asset, serve("text/html", []byte("<html>sign in</html>")), ErrNotRomM, "", false},
		{"oversized by Content-Length", "", asset, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", strconv.Itoa(maxCover+1))
			w.Write(pngData)
		}, ErrTooLarge, "", false},
		{"oversized stream", "", asset, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Write(pngData)
			w.(http.Flusher).Flush()
			w.Write(make([]byte, maxCover))
		}, ErrTooLarge, "", false},
		{"404", "", asset, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(404)
			io.WriteString(w, "<html><center>nginx</center></html>")
		}, ErrNoCover, "", false},
		{"401", "", asset, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 401, map[string]any{"detail": "Not authenticated"})
		}, ErrUnauthorized, "", false},
		{"no cover", "", "", nil, ErrNoCover, "", true},
		{"IGDB", "", "https://images.igdb.com/igdb/image/upload/t_cover_big/co1.png", nil, ErrBadData, "", true},
		{"another origin", "", "//images.example/x.png", nil, ErrBadData, "", true},
		{"rooted elsewhere", "", "/api/roms?limit=1", nil, ErrBadData, "", true},
		{"climbs out", "", "roms/../../../etc/passwd", nil, ErrBadData, "", true},
		{"climbs out rooted", "", "/assets/romm/resources/../library/roms/x.nes", nil, ErrBadData, "", true},
		{"escaped", "", "roms/1/%2e%2e/x.png", nil, ErrBadData, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			if tt.handler != nil {
				f.route(asset, tt.handler)
			}
			base := srv.URL
			if tt.prefix != "" {
				mux := http.NewServeMux()
				mux.Handle(tt.prefix+"/", http.StripPrefix(tt.prefix, f))
				prefixed := httptest.NewServer(mux)
				t.Cleanup(prefixed.Close)
				base = prefixed.URL + tt.prefix
			}
			c := newClient(t, base)
			data, ct, err := c.Cover(context.Background(), ROM{ID: 356, Name: "Super Metroid", CoverPath: tt.cover})
			if tt.sentinel != nil {
				mustErr(t, err, tt.sentinel)
				if data != nil || ct != "" {
					t.Errorf("returned %d bytes of %q with the error", len(data), ct)
				}
			} else if err != nil || ct != tt.wantType || len(data) == 0 {
				t.Fatalf("Cover = %d bytes of %q, %v; want %s", len(data), ct, err, tt.wantType)
			}
			r := f.last(asset)
			switch {
			case tt.noReq && f.total() > 0:
				t.Errorf("%d requests for a path the cabinet must not fetch", f.total())
			case !tt.noReq && r == nil:
				t.Fatalf("no request for %s", asset)
			case !tt.noReq && (r.URL.RawQuery != "" || r.Header.Get("Authorization") != "Bearer "+testToken):
				t.Errorf("request %s with Authorization %q: want no query and the token", r.URL, r.Header.Get("Authorization"))
			}
		})
	}
}

// TestCoverFromFakeRomM reads every fixture ROM's cover from the fake.
func TestCoverFromFakeRomM(t *testing.T) {
	fake, c := startFakeRomM(t, fakeromm.Options{})
	ctx := context.Background()
	covers := 0
	for _, want := range fake.ROMs() {
		r, err := c.ROM(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		data, ct, err := c.Cover(ctx, r)
		img, has := fake.Cover(want.ID)
		if !has {
			mustErr(t, err, ErrNoCover)
			continue
		}
		covers++
		if err != nil || ct != "image/png" || !bytes.Equal(data, img) {
			t.Errorf("Cover(%d) = %d bytes of %q, %v; fake has %d", want.ID, len(data), ct, err, len(img))
		}
		if !strings.HasPrefix(r.CoverPath, "/assets/romm/resources/roms/") || !strings.Contains(r.CoverPath, "?ts=") {
			t.Errorf("ROM(%d).CoverPath = %q", want.ID, r.CoverPath)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("cover %d: %v", want.ID, err)
		}
	}
	if covers == 0 {
		t.Fatal("no fixture ROM has a cover")
	}
	fake.Revoke()
	r, _ := fake.ROM(fakeromm.ROMAlphaQuest)
	_, _, err := c.Cover(ctx, ROM{ID: r.ID, CoverPath: "roms/1/1/cover/big.png"})
	mustErr(t, err, ErrUnauthorized)
}

// TestCoverPathDecoding: path_cover_large is cleaned and bounded.
func TestCoverPathDecoding(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"/assets/romm/resources/roms/1/2/cover/big.png?ts=2024-01-01 10:00:00", "/assets/romm/resources/roms/1/2/cover/big.png?ts=2024-01-01 10:00:00"},
		{"roms/1/2/cover/\x00big\u202e.png", "roms/1/2/cover/big.png"},
		{"roms/" + strings.Repeat("a", 1100), ""},
		{"", ""},
	} {
		raw, _ := json.Marshal(tt.raw)
		body := fmt.Sprintf(`{"id":1,"platform_id":1,"fs_name":"x","path_cover_large":%s,"url_cover":"https://images.igdb.com/x.png"}`, raw)
		r, err := decodeROM([]byte(body))
		if err != nil || r.CoverPath != tt.want {
			t.Errorf("path_cover_large %q: CoverPath %q, %v; want %q", tt.raw, r.CoverPath, err, tt.want)
		}
	}
}

// TestTokenNeverInDownloadErrors is TestTokenNeverInErrors for DownloadFile and Cover.
func TestTokenNeverInDownloadErrors(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	modes := echoModes(other.URL, bearer)
	modes["content-range echo"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes "+bearer(r)+"/x")
		w.WriteHeader(206)
		io.WriteString(w, bearer(r))
	}
	modes["html file"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; "+bearer(r))
		io.WriteString(w, "<html>"+bearer(r))
	}
	modes["image type echo"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/"+bearer(r))
		io.WriteString(w, bearer(r))
	}
	modes["stall"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		io.WriteString(w, bearer(r))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	const content = "/api/roms/1/content/x.bin"
	const cover = "/assets/romm/resources/roms/1/1/cover/big.png"
	calls := map[string]struct {
		path string
		call func(c *Client) (string, error)
	}{
		"DownloadFile": {content, func(c *Client) (string, error) {
			n, err := c.DownloadFile(context.Background(), 1, File{ID: 1, Name: "x.bin", SizeBytes: 50000}, tempDst(t, nil),
				DownloadOptions{MaxRetries: 1, IdleTimeout: 100 * time.Millisecond, Sleep: (&sleeps{}).sleep})
			return strconv.FormatInt(n, 10), err
		}},
		"DownloadFile resumed": {content, func(c *Client) (string, error) {
			n, err := c.DownloadFile(context.Background(), 1, File{ID: 1, Name: "x.bin"}, tempDst(t, []byte("part")),
				DownloadOptions{MaxRetries: 1, IdleTimeout: 100 * time.Millisecond, MaxBytes: 1 << 20, Sleep: (&sleeps{}).sleep})
			return strconv.FormatInt(n, 10), err
		}},
		"Cover": {cover, func(c *Client) (string, error) {
			data, ct, err := c.Cover(context.Background(), ROM{ID: 1, CoverPath: cover + "?ts=1"})
			return string(data) + ct, err
		}},
	}
	for mode, h := range modes {
		for name, call := range calls {
			t.Run(mode+"/"+name, func(t *testing.T) {
				f, srv := newFake(t, "5.3.1")
				f.route(call.path, h)
				c := newClient(t, srv.URL)
				if mode == "stall" && name == "Cover" {
					c = withShortTimeout(t, c, 200*time.Millisecond)
				}
				result, err := call.call(c)
				if err == nil && name != "DownloadFile resumed" {
					t.Fatalf("no error from %q: %s", mode, result)
				}
				checkNoSecret(t, err, result, testToken)
			})
		}
	}
}

// patchDownloadAnswers documents, in a copy of doc, what RomM's download route answers and its
// 5.3.1 document leaves out (FastAPI documents every route as application/json): the file as
// application/octet-stream, for a Range a 206 with Content-Range, and a 416.
func patchDownloadAnswers(t *testing.T, doc string) string {
	t.Helper()
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	responses, _ := dig(d, "paths", "/api/roms/{id}/content/{file_name}", "get", "responses").(map[string]any)
	if responses == nil {
		t.Fatal("the document has no GET /api/roms/{id}/content/{file_name}")
	}
	file := map[string]any{"application/octet-stream": map[string]any{"schema": map[string]any{"type": "string", "format": "binary"}}}
	responses["200"] = map[string]any{"description": "The file (nginx; added by the romm client's test)", "content": file}
	responses["206"] = map[string]any{"description": "The requested range (nginx; added by the romm client's test)", "content": file,
		"headers": map[string]any{"Content-Range": map[string]any{"required": true, "schema": map[string]any{"type": "string", "pattern": "^bytes [0-9]+-[0-9]+/[0-9]+$"}}}}
	responses["416"] = map[string]any{"description": "Range past the end (nginx; added by the romm client's test)"}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPrismDownload sends the client's download request, whole, resumed (file_ids and a Range
// header) and complete, through Prism's validating proxy: the request is held to RomM 5.3.1's own
// document, the answer's status, headers and media type to what nginx sends in front of RomM
// (patchDownloadAnswers). Prism 5.14.2 cannot carry the file itself: it decodes the upstream body
// as UTF-8 (every byte over 0x7f becomes U+FFFD), so the bodies are not compared here, and
// DownloadFile through it must refuse the re-encoded file rather than keep it.
func TestPrismDownload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism (node): not in -short")
	}
	doc := patchDownloadAnswers(t, prism.PatchedDoc(t, referenceDoc(t, "romm-openapi-5.3.1.json"), fakeromm.Version531))
	fake, err := fakeromm.New(fakeromm.Options{Version: fakeromm.Version531})
	if err != nil {
		t.Fatal(err)
	}
	upstream := httptest.NewServer(fake)
	t.Cleanup(upstream.Close)
	base := prism.Proxy(t, doc, upstream.URL)
	rec := &violationRecorder{next: http.DefaultTransport}
	c := newClient(t, base, func(c *Config) {
		c.Token = fake.Token()
		c.Timeout = 20 * time.Second
		c.HTTPClient = &http.Client{Transport: rec}
	})
	r, f := romFile(t, c, fakeromm.ROMAlphaQuest)
	want, _ := fake.ROM(r.ID)
	data := want.Files[0].Bytes
	for _, tt := range []struct {
		name   string
		have   int64
		status int
	}{
		{"whole", 0, 200},
		{"resumed", 1000, 206},
		{"complete", int64(len(data)), 416},
	} {
		fake.ResetRequests()
		d := &download{c: c, romID: r.ID, f: f, have: tt.have}
		req, err := d.request(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		rec.check(t, tt.name)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: Prism answered %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
		// Prism answers an invalid request itself: reaching the fake means it passed.
		if got := statuses(t, fake, r.ID); fmt.Sprint(got) != fmt.Sprintf("[%d]", tt.status) {
			t.Errorf("%s: the fake answered %v, want [%d]", tt.name, got, tt.status)
		}
	}
	dst := tempDst(t, nil)
	n, err := c.DownloadFile(context.Background(), r.ID, f, dst, DownloadOptions{Sleep: (&sleeps{}).sleep})
	rec.check(t, "DownloadFile")
	if got := contents(t, dst); err == nil && !bytes.Equal(got, data) || n > int64(len(data)) {
		t.Errorf("DownloadFile through Prism = %d, %v: kept %d bytes that are not the file", n, err, len(got))
	}
}
