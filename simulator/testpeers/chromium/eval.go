package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Eval evaluates the JavaScript expression js in the page's main frame,
// awaits it when it is a promise, and returns its value as JSON (null for
// undefined; NaN, Infinity and BigInts as strings: "NaN", "12n"). A
// thrown exception or a rejected promise is an error.
func (b *Browser) Eval(ctx context.Context, js string) (json.RawMessage, error) {
	var r struct {
		Result           remoteObject `json:"result"`
		ExceptionDetails *struct {
			Text      string        `json:"text"`
			Exception *remoteObject `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := b.Call(ctx, "Runtime.evaluate", map[string]any{
		"expression":    js,
		"awaitPromise":  true,
		"returnByValue": true,
		"userGesture":   true,
	}, &r)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	if d := r.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		} else if d.Exception != nil && len(d.Exception.Value) > 0 {
			msg += " " + string(d.Exception.Value)
		}
		return nil, fmt.Errorf("eval: %s", firstLine(msg))
	}
	switch {
	case r.Result.UnserializableValue != "":
		return json.RawMessage(strconv.Quote(r.Result.UnserializableValue)), nil
	case len(r.Result.Value) == 0:
		return json.RawMessage("null"), nil
	}
	return r.Result.Value, nil
}

// remoteObject is the part of a Runtime.RemoteObject we read.
type remoteObject struct {
	Type                string          `json:"type"`
	Value               json.RawMessage `json:"value"`
	UnserializableValue string          `json:"unserializableValue"`
	Description         string          `json:"description"`
}

// evalString runs js, which yields a string: "" for success, else what
// went wrong.
func (b *Browser) evalString(ctx context.Context, js string) (string, error) {
	raw, err := b.Eval(ctx, js)
	if err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("eval: want a string, got %s", trimJSON(raw))
	}
	return s, nil
}

// Call sends any DevTools command to the page's session and decodes its
// result into result (when not nil): for what the other methods do not
// cover. Without a deadline in ctx, Options.CallTimeout bounds it.
func (b *Browser) Call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	return b.conn.call(ctx, b.session, method, params, result)
}

// Console is what the page logged lately (its last 200 lines, "level
// source: text"): console calls, uncaught exceptions, and Chromium's own
// messages such as Content-Security-Policy violations ("error security:
// Sending form data to … violates … form-action"). Chromium reports some
// of those after the event that caused them: wait for one with
// WaitConsole.
func (b *Browser) Console() []string { return b.console.lines() }

// WaitConsole waits until a console line holds substr and returns it.
func (b *Browser) WaitConsole(ctx context.Context, substr string) (string, error) {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	for {
		lines, changed := b.console.snapshot()
		for _, l := range lines {
			if strings.Contains(l, substr) {
				return l, nil
			}
		}
		select {
		case <-changed:
		case <-b.conn.closed:
			return "", fmt.Errorf("wait for console %q: %w", substr, b.conn.errOf())
		case <-ctx.Done():
			return "", fmt.Errorf("wait for console %q: %w (console: %q)", substr, ctx.Err(), lines)
		}
	}
}

// console collects log lines from events.
type console struct {
	mu      sync.Mutex
	l       []string
	changed chan struct{} // closed and replaced when a line arrives
}

const consoleLines = 200

func (c *console) add(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.l = append(c.l, line)
	if len(c.l) > consoleLines {
		c.l = append(c.l[:0], c.l[len(c.l)-consoleLines:]...)
	}
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// snapshot is the lines and a channel closed when another one arrives.
func (c *console) snapshot() ([]string, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return append([]string(nil), c.l...), c.changed
}

func (c *console) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.l...)
}

// see turns a Log, console or exception event into a line.
func (c *console) see(e event) {
	switch e.Method {
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Source, Level, Text, URL string
			} `json:"entry"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			c.add(fmt.Sprintf("%s %s: %s", p.Entry.Level, p.Entry.Source, strings.TrimSpace(p.Entry.Text)))
		}
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string         `json:"type"`
			Args []remoteObject `json:"args"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			parts := make([]string, 0, len(p.Args))
			for _, a := range p.Args {
				var s string
				switch {
				case json.Unmarshal(a.Value, &s) == nil:
				case len(a.Value) > 0:
					s = string(a.Value)
				default:
					s = a.Description
				}
				parts = append(parts, s)
			}
			c.add(fmt.Sprintf("%s console: %s", p.Type, strings.Join(parts, " ")))
		}
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string        `json:"text"`
				Exception *remoteObject `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			msg := p.ExceptionDetails.Text
			if x := p.ExceptionDetails.Exception; x != nil && x.Description != "" {
				msg = firstLine(x.Description)
			}
			c.add("error exception: " + msg)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// errNoNavigation explains a Submit that started nothing.
func (b *Browser) errNoNavigation(err error) error {
	lines := b.Console()
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	if len(lines) == 0 {
		return err
	}
	return errors.Join(err, fmt.Errorf("the page's last console lines:\n%s", strings.Join(lines, "\n")))
}

// WaitFor waits until the JavaScript condition cond holds in the page,
// looking again every 50 ms inside the page (a navigation meanwhile ends
// the wait with an error); it returns ctx's error when ctx ends first.
func (b *Browser) WaitFor(ctx context.Context, cond string) error {
	js := `new Promise((resolve) => { const t = () => { try { if (` + cond + `) return resolve(true); } catch (e) {} setTimeout(t, 50); }; t(); })`
	_, err := b.Eval(ctx, js)
	return err
}
