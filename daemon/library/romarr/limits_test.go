package romarr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// allocated runs f and returns what it allocated in all (an upper bound of how far it grew the
// heap) and what its result still holds after a collection.
func allocated(f func() any) (total, held uint64) {
	runtime.GC()
	var before, after, kept runtime.MemStats
	runtime.ReadMemStats(&before)
	v := f()
	runtime.ReadMemStats(&after)
	runtime.GC()
	runtime.ReadMemStats(&kept)
	runtime.KeepAlive(v)
	return after.TotalAlloc - before.TotalAlloc, max(kept.HeapAlloc, before.HeapAlloc) - before.HeapAlloc
}

func repeated(prefix, item string, n int, suffix string) []byte {
	var b bytes.Buffer
	b.Grow(len(prefix) + n*(len(item)+1) + len(suffix))
	b.WriteString(prefix + "[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteString("]" + suffix)
	return b.Bytes()
}

// members writes an object of n members "0", "1", … whose values are item.
func members(prefix, item string, n int, suffix string) []byte {
	var b bytes.Buffer
	b.WriteString(prefix + "{")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", fmt.Sprint(i), item)
	}
	b.WriteString("}" + suffix)
	return b.Bytes()
}

// TestWorstCases decodes the costliest answers that pass each route's shape bounds and checks
// they stay well under 40 MiB. Run with -v for the figures.
func TestWorstCases(t *testing.T) {
	c := testClient(t)
	obj := `{"a":{}}` // a map of one member inside a map: the costliest value for an any
	for _, tc := range []struct {
		name   string
		shape  bounded.JSONLimits
		body   []byte
		decode func([]byte) any
	}{
		{"status of many clients", smallJSON, repeated(`{"version":"0.8.0","libraries":[],"clients":`, `{"name":"x","protocol":"x","detail":"x"}`, smallJSON.ArrayLen, "}"),
			func(b []byte) any { st, _ := c.decodeStatus(b); return st }},
		{"request with an object for its error", smallJSON, members(`{"ok":false,"error":`, obj, (smallJSON.Values-3)/3, "}"),
			func(b []byte) any { r, _ := c.decodeRequest(b); return r }},
		{"a long Wanted list", listJSON, repeated(`{"items":`, `{"game":"x","platform":"snes","added":"2026-01-01","attempts":1,"last_error":"x"}`, listJSON.ArrayLen, "}"),
			func(b []byte) any { w, _ := c.decodeWanted(b, "", MaxLimit); return w }},
		{"a library page of lists", listJSON, repeated(`{"items":`, `{"name":"x","genres":["a","b","c"],"regions":["a"]}`, listJSON.Elements/5, "}"),
			func(b []byte) any { g, _ := c.decodeGames(b, MaxLimit); return g }},
		{"platforms of many extensions", listJSON, repeated(``, `{"slug":"x","extensions":[".a",".b",".c"]}`, listJSON.ArrayLen, ""),
			func(b []byte) any { p, _ := c.decodePlatforms(b); return p }},
	} {
		if err := bounded.CheckJSON(tc.body, tc.shape); err != nil {
			t.Fatalf("%s does not pass its bounds: %v", tc.name, err)
		}
		total, held := allocated(func() any { return tc.decode(tc.body) })
		t.Logf("%-38s body %8d: allocated %.1f MiB, holds %.1f MiB", tc.name, len(tc.body), float64(total)/(1<<20), float64(held)/(1<<20))
		// The lists are streamed: most of what they allocate is garbage at once, so the bound on
		// what they hold is the one that matters; all of it is still bounded.
		if held > 8<<20 || total > 160<<20 {
			t.Errorf("%s: allocated %d, holds %d", tc.name, total, held)
		}
		if tc.shape.Values == smallJSON.Values && total > 40<<20 {
			t.Errorf("%s decoded whole: allocated %d", tc.name, total)
		}
	}
}

// TestHostileAnswersRefused: answers of millions of empty objects are refused before they are
// decoded, naming the route, what was too many and where.
func TestHostileAnswersRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
		call func(*Client) error
		want string
	}{
		{"Wanted", repeated(`{"items":`, "{}", (15<<20)/3, "}"),
			func(c *Client) error { _, err := c.Wanted(context.Background(), "", 5); return err },
			"romarr wanted list: GET /api/v1/wanted/missing: ROMarr's answer has a list of more than 50000 items (at $.items), more than Cabinet reads: check cabinet.romarr.url is ROMarr"},
		{"status", repeated(`{"version":"0.8.0","clients":`, "{}", (1<<20)/3-20, "}"),
			func(c *Client) error { _, err := c.Status(context.Background()); return err },
			"romarr status: GET /api/v1/system/status: ROMarr's answer has a list of more than 1000 items (at $.clients), more than Cabinet reads"},
		{"request", []byte(`{"ok":false,"error":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`),
			func(c *Client) error { _, err := c.RequestGame(context.Background(), "x", "snes"); return err },
			"ROMarr's answer has lists and objects nested more than 16 deep (at $.error[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(tc.body)
			}, 10*time.Second)
			var err error
			total, _ := allocated(func() any { err = tc.call(c); return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, bounded.ErrTooLarge) {
				t.Fatalf("error %v\nwant it to say %q", err, tc.want)
			}
			noSecret(t, err)
			t.Logf("%d-byte answer refused: the call allocated %.1f MiB", len(tc.body), float64(total)/(1<<20))
			// Reading an answer of unknown length grows a buffer to it: about twice its size in
			// all, four times under the race detector; decoding it took gigabytes.
			if limit := uint64(5*len(tc.body) + 8<<20); total > limit {
				t.Errorf("refusing allocated %d, more than %d", total, limit)
			}
		})
	}
}
