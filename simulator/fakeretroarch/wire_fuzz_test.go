package fakeretroarch

import (
	"strings"
	"testing"
)

// FuzzProcess feeds arbitrary datagrams to the command parser (no socket, no
// folders, so nothing is written) and checks every reply has a 1.14 shape.
func FuzzProcess(f *testing.F) {
	for _, s := range []string{
		"VERSION", "GET_STATUS\nVERSION", "GET_CONFIG_PARAM", "GET_CONFIG_PARAM log_dir",
		"\n\nPAUSE_TOGGLE\nPAUSE_TOGGLE\nGET_STATUS", "SHOW_MSG", "VERSION\x00GET_STATUS", "QUIT",
	} {
		f.Add([]byte(s), []byte("GET_CONFIG_PARAM savestate_directory"))
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		s := &Server{loaded: true, st: gameState{content: stub}}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, pkt := range [][]byte{first, second} {
			var replies []string
			s.processLocked(pkt, func(r string) { replies = append(replies, r) })
			if limit := strings.Count(string(pkt), "\n") + 1; len(replies) > limit {
				t.Fatalf("%q: %d replies for at most %d commands", pkt, len(replies), limit)
			}
			for _, r := range replies {
				ok := r == Version+"\n" || strings.HasPrefix(r, "GET_STATUS PLAYING nes,stub,crc32=708c346c\n") ||
					strings.HasPrefix(r, "GET_STATUS PAUSED nes,stub,crc32=708c346c\n") || strings.HasPrefix(r, "GET_CONFIG_PARAM ")
				if !ok || len(r) > rxSize+len("GET_CONFIG_PARAM  unsupported") {
					t.Fatalf("%q: reply %q has no 1.14 shape", pkt, r)
				}
			}
		}
	})
}
