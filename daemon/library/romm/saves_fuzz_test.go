package romm

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

const (
	worstSyncOp = `{"action":"download","rom_id":1,"save_id":1,"file_name":"","slot":"","emulator":"","reason":"","server_updated_at":"2025-06-01T12:00:00+00:00","server_content_hash":""}`
	worstSave   = `{"id":1,"rom_id":1,"file_name":"","slot":"","emulator":"","content_hash":"","origin_device_id":"","file_size_bytes":1,"updated_at":"2025-06-01T12:00:00+00:00"}`
)

// TestSyncWorstCase holds syncJSON to the heap budget of the other typed answers: the longest
// negotiation and list of saves that pass it, every field of every item set, decode within
// heapBudget; one item more is refused before decoding.
func TestSyncWorstCase(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap of decoding 50k operations: not in -short")
	}
	for _, tt := range []struct {
		name   string
		write  func(b *bytes.Buffer, n int)
		decode func([]byte) any
	}{
		{"negotiation", func(b *bytes.Buffer, n int) {
			b.WriteString(`{"session_id":1,"operations":`)
			list(b, n, literal(worstSyncOp))
			b.WriteString(`}`)
		}, func(body []byte) any { n, _ := decodeNegotiation(body); return n }},
		{"saves", func(b *bytes.Buffer, n int) { list(b, n, literal(worstSave)) },
			func(body []byte) any { s, _ := decodeSaves(body); return s }},
	} {
		var b bytes.Buffer
		tt.write(&b, syncJSON.Elements)
		if err := bounded.CheckJSON(b.Bytes(), syncJSON); err != nil {
			t.Fatalf("%s: the worst case passing the limits is refused: %v", tt.name, err)
		}
		total, held := heapCost(func() any { return tt.decode(b.Bytes()) })
		t.Logf("%s: %d items, %s body: decoding allocated %s, holds %s", tt.name, syncJSON.Elements, mib(uint64(b.Len())), mib(total), mib(held))
		if total > heapBudget {
			t.Errorf("%s: decoding allocated %s, over the budget of %s", tt.name, mib(total), mib(heapBudget))
		}
		b.Reset()
		tt.write(&b, syncJSON.Elements+1)
		if err := bounded.CheckJSON(b.Bytes(), syncJSON); !errors.Is(err, bounded.ErrTooLarge) {
			t.Errorf("%s: one item over the limits: %v", tt.name, err)
		}
	}
}

func FuzzSyncDecode(f *testing.F) {
	for _, s := range []string{"", "null", "{}", `{"session_id":1,"operations":[]}`, `{"session_id":0,"operations":[]}`,
		`{"session_id":1,"operations":[` + worstSyncOp + `]}`,
		`{"session_id":1,"operations":[{"action":"upload","rom_id":1,"save_id":null,"file_name":"Game.srm","slot":null,"emulator":null,"reason":"Save exists on client but not on server","server_updated_at":null,"server_content_hash":null}]}`,
		`{"session_id":1,"operations":[{"action":"conflict","rom_id":1,"file_name":"x","reason":"r"}]}`,
		`{"session_id":1,"operations":[{"action":"delete","rom_id":1,"save_id":2,"file_name":"x","reason":"r"}]}`,
		`{"session_id":1,"operations":[{"action":"download","rom_id":1,"save_id":2,"file_name":"../x\u0000.srm","reason":"\u202eevil\nline","server_updated_at":"yesterday","server_content_hash":"ABCDEF0123456789ABCDEF0123456789"}]}`,
		`{"session_id":1e30,"operations":[]}`, `{"session_id":1,"operations":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := decodeNegotiation(body)
		if err != nil {
			if n.SessionID != 0 || n.Ops != nil {
				t.Fatalf("error %v with a result %+v", err, n)
			}
			checkLine(t, "error", err.Error(), 0)
			return
		}
		if n.SessionID <= 0 {
			t.Fatalf("session %d", n.SessionID)
		}
		for i, op := range n.Ops {
			switch op.Action {
			case SyncUpload, SyncNoOp:
			case SyncDownload, SyncConflict:
				if op.SaveID <= 0 {
					t.Fatalf("op %d: a %s without a save id", i, op.Action)
				}
			default:
				t.Fatalf("op %d: action %q", i, op.Action)
			}
			if op.ROMID <= 0 || op.SaveID < 0 || len(op.FileName) > maxRawName || len(op.Slot) > maxRawName || len(op.Emulator) > maxRawName {
				t.Fatalf("op %d = %+v", i, op)
			}
			checkLine(t, "reason", op.Reason, capSyncReason)
			checkHash(t, "server hash", op.ServerHash, 32)
			if y := op.ServerUpdatedAt.Year(); !op.ServerUpdatedAt.IsZero() && (y < 1970 || y > 9999) {
				t.Fatalf("op %d: time %v", i, op.ServerUpdatedAt)
			}
		}
	})
}

func FuzzSavesDecode(f *testing.F) {
	for _, s := range []string{"", "[]", "{}", "[" + worstSave + "]", `[{"id":1,"rom_id":1,"file_name":"a","updated_at":null}]`,
		`[{"id":1,"rom_id":2,"file_name":"a/../b","origin_device_id":"x y","file_size_bytes":-1,"updated_at":"2025-06-01T12:00:00"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		saves, err := decodeSaves(body)
		if err != nil {
			checkLine(t, "error", err.Error(), 0)
			return
		}
		for i, s := range saves {
			if s.ID <= 0 || s.ROMID <= 0 || s.Size < 0 || s.UpdatedAt.IsZero() || len(s.FileName) > maxRawName ||
				(s.OriginDevice != "" && !deviceIDOK(s.OriginDevice)) || strings.ToLower(s.ContentHash) != s.ContentHash {
				t.Fatalf("save %d = %+v", i, s)
			}
			checkHash(t, "content hash", s.ContentHash, 32)
		}
	})
}
