package power

import (
	"fmt"
	"sync"
	"time"
)

// DefaultWindow is how long a first press stays armed.
const DefaultWindow = 10 * time.Second

// Presses is the "second press within 10 s" rule of the Home Assistant
// power buttons: a first press only arms its action (and the cabinet
// shows Prompt); a second press of the same action within Window confirms
// it. The zero value is ready to use; it is safe for concurrent use.
type Presses struct {
	// Window is how long a first press stays armed; 0 is DefaultWindow.
	Window time.Duration

	mu    sync.Mutex
	armed Action
	until time.Time
}

// Press records a press of a at now and reports whether it confirms a: a
// second press of the same action within the window. A confirming press
// disarms; a press of another action, or after the window, is a first
// press (it arms a and reports false).
func (p *Presses) Press(a Action, now time.Time) (confirmed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed == a && !now.After(p.until) {
		p.armed, p.until = "", time.Time{}
		return true
	}
	w := p.Window
	if w <= 0 {
		w = DefaultWindow
	}
	p.armed, p.until = a, now.Add(w)
	return false
}

// Prompt is the on-screen text of a first press of a.
func (p *Presses) Prompt(a Action) string {
	w := p.Window
	if w <= 0 {
		w = DefaultWindow
	}
	return fmt.Sprintf("Press again within %d s to %s", max(1, int(w.Round(time.Second)/time.Second)), a.Phrase())
}
