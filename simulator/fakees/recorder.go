package fakees

import (
	"strings"
	"sync"
)

// Recorder is an EventSink that remembers events as "name|arg1|arg2…",
// for tests that check which hooks ES fired.
type Recorder struct {
	mu     sync.Mutex
	events []string
}

// Fire records an event.
func (r *Recorder) Fire(event string, args ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, strings.Join(append([]string{event}, args...), "|"))
}

// Take returns the events since the last Take.
func (r *Recorder) Take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// List returns every event not yet taken, keeping them.
func (r *Recorder) List() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}
