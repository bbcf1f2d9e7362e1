package romm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// hostileROM is issue 24's answer: a ROM whose files (or one file's archive members) are
// millions of empty objects, about 15 MiB.
func hostileROM(field string) []byte {
	var b bytes.Buffer
	n := (15 << 20) / 3
	b.Grow(3*n + 100)
	if field == "files" {
		b.WriteString(`{"id":5,"platform_id":1,"fs_name":"x","files":`)
	} else {
		b.WriteString(`{"id":5,"platform_id":1,"fs_name":"x","files":[{"id":1,"archive_members":`)
	}
	list(&b, n, literal("{}"))
	if field != "files" {
		b.WriteString(`}]`)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// TestHostileListRefused: the client refuses issue 24's answers before decoding them, with an
// error that says what and where, for about the cost of reading the body.
func TestHostileListRefused(t *testing.T) {
	for _, c := range []struct {
		field, at string
	}{
		{"files", "$.files"},
		{"archive_members", "$.files[0].archive_members"},
	} {
		t.Run(c.field, func(t *testing.T) {
			body := hostileROM(c.field)
			f, srv := newFake(t, "5.3.1")
			f.route("/api/roms/5/simple", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
			})
			client := newClient(t, srv.URL)
			if _, err := client.Version(context.Background()); err != nil {
				t.Fatal(err)
			}
			var err error
			total, _ := heapCost(func() any { _, err = client.ROM(context.Background(), 5); return nil })
			mustErr(t, err, ErrTooLarge)
			want := fmt.Sprintf("RomM's answer to GET /api/roms/5/simple has a list of more than %d items (at %s): is cabinet.romm.url the RomM address?", maxFiles, c.at)
			if err.Error() != want {
				t.Errorf("error %q\nwant      %q", err, want)
			}
			if !errors.Is(err, ErrTooLarge) || errors.Is(err, bounded.ErrTooLarge) {
				t.Errorf("error %v should be the client's ErrTooLarge only", err)
			}
			t.Logf("%d-byte body refused: the call allocated %s", len(body), mib(total))
			// Reading a body of unknown length grows a buffer to it: about twice its size in all,
			// four times under the race detector. Decoding these bodies took 1.6–2 GiB.
			if limit := uint64(5*len(body) + 8<<20); total > limit {
				t.Errorf("refusing allocated %s, more than %s", mib(total), mib(limit))
			}
		})
	}
}

// TestShapeAtTheClient: every 2xx answer, read or write, is checked before it is decoded; large
// real shapes the typed decoders skip pass; a body that is not JSON keeps its own message.
func TestShapeAtTheClient(t *testing.T) {
	ids := func(n int) string {
		var b bytes.Buffer
		list(&b, n, literal("123456"))
		return b.String()
	}
	call := map[string]func(c *Client) error{
		"rom": func(c *Client) error { _, err := c.ROM(context.Background(), 5); return err },
		"search": func(c *Client) error {
			_, err := c.SearchROMs(context.Background(), SearchQuery{Limit: 10})
			return err
		},
		"collections": func(c *Client) error { _, err := c.Collections(context.Background(), KindVirtual); return err },
		"get": func(c *Client) error {
			_, _, err := c.Get(context.Background(), "/api/roms/identifiers", nil)
			return err
		},
		"openapi": func(c *Client) error { _, err := c.OpenAPI(context.Background()); return err },
		"sessions": func(c *Client) error {
			s := PlaySession{ROMID: 7, Start: time.Unix(1e9, 0), End: time.Unix(1e9+60, 0), Duration: time.Minute}
			_, err := c.PostPlaySessions(context.Background(), "", []PlaySession{s})
			return err
		},
		"pair": func(c *Client) error { _, err := c.ExchangePairCode(context.Background(), "ABCD2345"); return err },
	}
	routes := map[string]string{"rom": "/api/roms/5/simple", "search": "/api/roms", "collections": "/api/collections/virtual",
		"get": "/api/roms/identifiers", "openapi": "/openapi.json", "sessions": "/api/play-sessions", "pair": "/api/client-tokens/exchange"}
	for _, tc := range []struct {
		name, call, body string
		is               error
		want             string // "" when the call succeeds
	}{
		{"a page's files", "search", `{"items":[{"id":1,"files":[` + strings.Repeat(`{},`, maxFiles) + `{}]}],"total":1}`, ErrTooLarge,
			"RomM's answer to GET /api/roms has a list of more than 10000 items (at $.items[0].files): ask for fewer items (a smaller limit)"},
		{"list items in all", "rom", `{"id":5,"files":[` + strings.Repeat(`{"archive_members":[`+strings.Repeat(`{},`, 9999)+`{}]},`, 3) + `{}]}`, ErrTooLarge,
			"RomM's answer to GET /api/roms/5/simple has more than 30000 list items in all (at $.files[2].archive_members[9997]): is cabinet.romm.url the RomM address?"},
		{"too deep", "rom", `{"id":5,"summary":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, ErrBadData,
			"nested more than 32 deep (at $.summary" + strings.Repeat("[0]", 31) + "), deeper than RomM's API nests"},
		{"not JSON keeps its message", "rom", `{"id":5,"files":[` + strings.Repeat(`{},`, 20000), ErrBadData, "not valid JSON"},
		{"rom_id_index of RomM 5.0 passes", "search", `{"items":[{"id":1}],"total":1,"rom_id_index":` + ids(200_000) + `}`, nil, ""},
		{"rom_ids of a large library pass", "collections", `[{"id":"Z2VucmU","name":"Action","rom_count":200000,"rom_ids":` + ids(200_000) + `}]`, nil, ""},
		{"a ROM's achievements pass", "rom", `{"id":5,"merged_ra_metadata":{"achievements":[` + strings.Repeat(`{"id":1,"title":"x"},`, 40_000) + `{}]}}`, nil, ""},
		{"generic answers are counted whole", "get", ids(100_000), ErrTooLarge,
			"RomM's answer to GET /api/roms/identifiers has more than 80000 values in all (at $[79999]): the cabinet reads no more of one answer: narrow it"},
		{"generic identifiers of a large library", "get", ids(79_999), nil, ""},
		{"the OpenAPI document", "openapi", `{"openapi":"3.1.0","x":` + ids(20_000) + `}`, ErrTooLarge,
			"RomM's answer to GET /openapi.json has a list of more than 10000 items (at $.x): is cabinet.romm.url the RomM address?"},
		{"a write's answer", "sessions", `{"results":[` + strings.Repeat(`{},`, maxFiles) + `{}]}`, ErrTooLarge,
			"RomM's answer to POST /api/play-sessions has a list of more than 10000 items (at $.results): is cabinet.romm.url the RomM address?"},
		{"a sign-in answer never names where", "pair", `{"raw_token":"rmm_x","` + testToken[:40] + `":[` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `]}`, ErrBadData,
			"RomM's answer to POST /api/client-tokens/exchange has lists and objects nested more than 32 deep, deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			if tc.call == "pair" {
				f.token = "" // the exchange is open; the fake checks nothing
			}
			f.route(routes[tc.call], func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, tc.body)
			})
			err := call[tc.call](newClient(t, srv.URL))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			mustErr(t, err, tc.is)
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), testToken[4:20]) {
				t.Errorf("error %q\nwant it to say %q", err, tc.want)
			}
		})
	}
}
