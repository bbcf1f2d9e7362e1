package openapi

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// TestDocumentWorstCase parses the costliest documents that pass documentLimits — small objects
// in one large object, each decoded to a map — and checks that what Parse allocates, and keeps
// for as long as the index lives, stays well under 40 MiB. RomM's own 5.3.1 document is measured
// alongside. Run with -v for the figures.
func TestDocumentWorstCase(t *testing.T) {
	lim := documentLimits
	head := `{"openapi":"3.1.0","info":{"version":"5.3.1"},"paths":{},"x":`
	docs := map[string][]byte{"RomM 5.3.1": readDoc(t, "romm-openapi-5.3.1.json")}
	var b bytes.Buffer
	b.WriteString(head + "{")
	for i := 0; i < (lim.Values-7)/2; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d":{"a":{}}`, i)
	}
	b.WriteString("}}")
	docs["one-member objects"] = bytes.Clone(b.Bytes())
	b.Reset()
	b.WriteString(head + "[")
	for i := 0; i < lim.ArrayLen; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"a":0}`)
	}
	b.WriteString("]}")
	docs["list of objects"] = bytes.Clone(b.Bytes())

	for name, doc := range docs {
		if err := bounded.CheckJSON(doc, lim); err != nil {
			t.Fatalf("%s does not pass: %v", name, err)
		}
		runtime.GC()
		var before, after, kept runtime.MemStats
		runtime.ReadMemStats(&before)
		ix, err := Parse(doc)
		runtime.ReadMemStats(&after)
		runtime.GC()
		runtime.ReadMemStats(&kept)
		runtime.KeepAlive(ix)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		total, held := after.TotalAlloc-before.TotalAlloc, max(kept.HeapAlloc, before.HeapAlloc)-before.HeapAlloc
		t.Logf("%-20s %8d bytes: Parse allocated %.1f MiB, the index holds %.1f MiB", name, len(doc), float64(total)/(1<<20), float64(held)/(1<<20))
		if total > 32<<20 {
			t.Errorf("%s: Parse allocated %.1f MiB: tighten documentLimits", name, float64(total)/(1<<20))
		}
	}
}
