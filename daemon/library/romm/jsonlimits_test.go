package romm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/daemon/library/openapi"
)

// heapBudget is what an answer that passes its shape limits may cost to decode, on top of its
// body (issue 24).
const heapBudget = 40 << 20

// heapCost runs f and returns what it allocated in all — an upper bound of how far it grew the
// heap, since the garbage of growing slices counts too — and what f's result still holds.
func heapCost(f func() any) (total, held uint64) {
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

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// list writes n copies of item, separated by commas, inside [ ].
func list(b *bytes.Buffer, n int, item func(b *bytes.Buffer)) {
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		item(b)
	}
	b.WriteByte(']')
}

func literal(s string) func(*bytes.Buffer) { return func(b *bytes.Buffer) { b.WriteString(s) } }

// Costliest items of each decoded list: every pointer field set, so each allocates.
const (
	worstFile   = `{"category":"","crc_hash":"","md5_hash":"","sha1_hash":""}`
	worstMember = `{"crc_hash":"","md5_hash":"","sha1_hash":""}`
	worstROM    = `{"name":"","summary":"","crc_hash":"","md5_hash":"","sha1_hash":"","has_multiple_files":true,"multi":true,"path_cover_large":"","metadatum":{"player_count":"","first_release_date":1}}`
)

// worstCase is an answer and the decoder that reads it.
type worstCase struct {
	name   string
	body   []byte
	decode func([]byte) any
}

// worstTyped are the documents that cost the typed decoders most while passing typedJSON: each
// fills the list-item bound with the items the decoders allocate most for.
func worstTyped() []worstCase {
	lim := typedJSON
	rom := func(b []byte) any { r, _ := decodeROM(b); return r }
	page := func(b []byte) any { p, _ := decodePage(b, 0, MaxLimit); return p }
	var out []worstCase
	add := func(name string, decode func([]byte) any, write func(b *bytes.Buffer)) {
		var b bytes.Buffer
		write(&b)
		out = append(out, worstCase{name, b.Bytes(), decode})
	}
	// Files across a page: Elements RomFiles (the largest struct in a list) in lists of ArrayLen.
	add("page of ROMs full of files", page, func(b *bytes.Buffer) {
		var files []int // per item; items and files together make Elements
		for left := lim.Elements; left > 1; left -= 1 + files[len(files)-1] {
			files = append(files, min(lim.ArrayLen, left-1))
		}
		b.WriteString(`{"items":`)
		i := 0
		list(b, len(files), func(b *bytes.Buffer) {
			b.WriteString(`{"id":1,"files":`)
			list(b, files[i], literal(worstFile))
			b.WriteByte('}')
			i++
		})
		b.WriteString(`,"total":1}`)
	})
	// One ROM: ArrayLen files, the remaining items as their archive members.
	perFile := (lim.Elements - lim.ArrayLen) / lim.ArrayLen
	add("one ROM, files and archive members", rom, func(b *bytes.Buffer) {
		b.WriteString(`{"id":1,"files":`)
		list(b, lim.ArrayLen, func(b *bytes.Buffer) {
			b.WriteString(`{"id":1,"archive_members":`)
			list(b, perFile, literal(worstMember))
			b.WriteByte('}')
		})
		b.WriteByte('}')
	})
	// The longest page: ArrayLen ROMs, each with every field that allocates.
	add("page of the most ROMs", page, func(b *bytes.Buffer) {
		b.WriteString(`{"items":`)
		list(b, lim.ArrayLen, literal(worstROM))
		b.WriteString(`}`)
	})
	// Text lists: Elements strings.
	add("ROM of text lists", rom, func(b *bytes.Buffer) {
		n := min(lim.ArrayLen, lim.Elements/3)
		b.WriteString(`{"id":1,"metadatum":{"genres":`)
		list(b, n, literal(`"x"`))
		b.WriteString(`,"companies":`)
		list(b, n, literal(`"x"`))
		b.WriteString(`,"developers":`)
		list(b, n, literal(`"x"`))
		b.WriteString(`}}`)
	})
	// Collections: the longest list, each with rom_ids (12 MiB of them) the decoder skips.
	add("collections with huge rom_ids", func(b []byte) any { c, _ := decodeCollections(b, KindRegular); return c }, func(b *bytes.Buffer) {
		list(b, lim.ArrayLen, func(b *bytes.Buffer) {
			b.WriteString(`{"id":1,"name":"","description":"","rom_count":1,"rom_ids":`)
			list(b, 300, literal("123"))
			b.WriteByte('}')
		})
	})
	add("platforms", func(b []byte) any { p, _ := decodePlatforms(b); return p }, func(b *bytes.Buffer) {
		list(b, lim.ArrayLen, literal(`{"id":1,"custom_name":"","display_name":"","firmware":[{},{},{},{},{}]}`))
	})
	add("play session results", func(b []byte) any { r, _ := decodeSessionResults(b, MaxSessionsPerRequest); return r }, func(b *bytes.Buffer) {
		b.WriteString(`{"results":`)
		list(b, lim.ArrayLen, literal(`{"index":1,"status":"","id":1,"detail":""}`))
		b.WriteString(`}`)
	})
	add("sign-in scopes", func(b []byte) any { r, _ := decodeDeviceToken(b); return r }, func(b *bytes.Buffer) {
		b.WriteString(`{"access_token":"rmm_x","scopes":`)
		list(b, lim.ArrayLen, literal(`""`))
		b.WriteString(`}`)
	})
	return out
}

// TestTypedWorstCase decodes the costliest answers that pass typedJSON and checks they stay
// within heapBudget. Run with -v for the figures behind the limits.
func TestTypedWorstCase(t *testing.T) {
	for _, c := range worstTyped() {
		if len(c.body) > maxJSON {
			t.Fatalf("%s: %d bytes, over the body bound: make the case smaller", c.name, len(c.body))
		}
		if err := bounded.CheckJSON(c.body, typedJSON); err != nil {
			t.Fatalf("%s does not pass typedJSON: %v", c.name, err)
		}
		total, held := heapCost(func() any { return c.decode(c.body) })
		t.Logf("%-36s body %9d: allocated %s, holds %s", c.name, len(c.body), mib(total), mib(held))
		if total > heapBudget {
			t.Errorf("%s: allocated %s, more than %s: tighten typedJSON", c.name, mib(total), mib(heapBudget))
		}
	}
}

// worstGeneric are the costliest answers Get passes on: small objects (a map each, ~300 bytes
// before the cleaned copy) and long strings filling the rest of the tools' 8 MiB.
func worstGeneric() map[string][]byte {
	lim := genericJSON
	out := map[string][]byte{}
	var b bytes.Buffer
	b.WriteString(`{"items":`)
	list(&b, (lim.Values-2)/2, literal(`{"a":{}}`))
	b.WriteString(`}`)
	out["one-member objects"] = bytes.Clone(b.Bytes())

	b.Reset()
	b.WriteString(`{"items":`)
	long := `{"a":"` + strings.Repeat("x", openapi.MaxResponseBytes/((lim.Values-2)/2)-20) + `"}`
	list(&b, (lim.Values-2)/2, literal(long))
	b.WriteString(`}`)
	out["objects with long strings"] = bytes.Clone(b.Bytes())

	b.Reset()
	b.WriteByte('{')
	for i := 0; i < lim.Values-1; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":0`, i)
	}
	b.WriteByte('}')
	out["one object of many keys"] = bytes.Clone(b.Bytes())

	b.Reset()
	list(&b, lim.Values-1, literal("0"))
	out["identifiers"] = bytes.Clone(b.Bytes())
	return out
}

// TestGenericWorstCase runs the costliest answers that pass genericJSON through the OpenAPI
// tools' read (decode into maps and slices, select, clean a copy, cut to 64 KiB).
func TestGenericWorstCase(t *testing.T) {
	ix, err := openapi.Parse(readTestdata(t, "../../openapi/testdata/romm-openapi-5.3.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range worstGeneric() {
		if len(body) > openapi.MaxResponseBytes {
			t.Fatalf("%s: %d bytes, more than the tools read", name, len(body))
		}
		if err := bounded.CheckJSON(body, genericJSON); err != nil {
			t.Fatalf("%s does not pass genericJSON: %v", name, err)
		}
		decoded, _ := heapCost(func() any {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber() // as openapi decodes
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			return v
		})
		get := func(context.Context, string, url.Values) (int, []byte, error) { return 200, body, nil }
		total, _ := heapCost(func() any {
			res, err := ix.Read(context.Background(), get, openapi.ReadRequest{OperationID: "stats_api_stats_get"})
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			return res
		})
		t.Logf("%-26s body %8d: decoding allocates %s, the whole read %s", name, len(body), mib(decoded), mib(total))
		// On top of the shape's cost, what grows with the body itself: the decoder's copy of it
		// (grown as it reads), its text, and the cleaned text — up to three times the body.
		if limit := uint64(heapBudget + 3*len(body)); total > limit {
			t.Errorf("%s: allocated %s, more than %s", name, mib(total), mib(limit))
		}
	}
}

// TestTypedListsAreListed guards typedJSON.Lists: every list a typed decoder fills must be
// counted, or the check would not bound what it costs.
func TestTypedListsAreListed(t *testing.T) {
	listed := map[string]bool{}
	for _, k := range typedJSON.Lists {
		listed[k] = true
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if ft.Kind() == reflect.Slice && ft != reflect.TypeOf(json.RawMessage(nil)) && !listed[name] {
				t.Errorf("%s.%s decodes the list %q, which typedJSON.Lists does not count", typ.Name(), f.Name, name)
			}
			walk(f.Type)
		}
	}
	// decodeSessionResults' own struct holds "results" (listed); the heartbeat's and devices'
	// hold no list.
	for _, v := range []any{rawPage{}, rawROM{}, rawCollection{}, rawPlatform{}, rawSessionResult{}, rawDeviceToken{}, rawDeviceCode{}} {
		walk(reflect.TypeOf(v))
	}
}
