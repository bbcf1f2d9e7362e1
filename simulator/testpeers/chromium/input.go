package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fillJS focuses the element and empties it, or sets a <select>; it yields
// "" for success or what went wrong.
const fillJS = `((sel, value) => {
	const el = document.querySelector(sel);
	if (!el) return "no element matches " + sel;
	if (el.disabled) return sel + " is disabled";
	if (el.readOnly) return sel + " is read-only";
	el.scrollIntoView({block: "center", inline: "center"});
	if (el.tagName === "SELECT") {
		if (![...el.options].some(o => o.value === value)) return sel + " has no option " + value;
		el.focus();
		el.value = value;
		el.dispatchEvent(new Event("input", {bubbles: true}));
		el.dispatchEvent(new Event("change", {bubbles: true}));
		return "select";
	}
	if (el.type === "checkbox" || el.type === "radio") return sel + " is a " + el.type + ": use Click";
	if (!("value" in el) && !el.isContentEditable) return sel + " is a <" + el.tagName.toLowerCase() + ">, not a field";
	el.focus();
	if (document.activeElement !== el) return sel + " cannot take the focus";
	if ("value" in el) el.value = ""; else el.textContent = "";
	return "";
})(%s, %s)`

// Fill types value into the text field (input, textarea) selector names,
// replacing what it held, as a user would: focus, then text input events,
// so maxlength, input and beforeinput handlers apply. A <select> gets the
// option with that value. Checkboxes and radio buttons take Click.
func (b *Browser) Fill(ctx context.Context, selector, value string) error {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	msg, err := b.evalString(ctx, fmt.Sprintf(fillJS, jsString(selector), jsString(value)))
	switch {
	case err != nil:
		return fmt.Errorf("fill %s: %w", selector, err)
	case msg == "select":
		return nil
	case msg != "":
		return fmt.Errorf("fill: %s", msg)
	}
	if value == "" {
		return nil
	}
	if err := b.conn.call(ctx, b.session, "Input.insertText", map[string]any{"text": value}, nil); err != nil {
		return fmt.Errorf("fill %s: %w", selector, err)
	}
	return nil
}

// pointJS scrolls the element into view and yields the centre of its box
// in CSS pixels, or what keeps a user from clicking it.
const pointJS = `((sel) => {
	const el = document.querySelector(sel);
	if (!el) return {err: "no element matches " + sel};
	el.scrollIntoView({block: "center", inline: "center"});
	const r = el.getBoundingClientRect();
	if (r.width === 0 || r.height === 0) return {err: sel + " is not visible (empty box)"};
	const x = r.left + r.width / 2, y = r.top + r.height / 2;
	const hit = document.elementFromPoint(x, y);
	if (!hit) return {err: sel + " is outside the viewport"};
	if (hit !== el && !el.contains(hit) && !(el.labels && [...el.labels].some(l => l.contains(hit)))) {
		const name = hit.tagName.toLowerCase() + (hit.id ? "#" + hit.id : "") + (hit.className && typeof hit.className === "string" ? "." + hit.className.trim().split(/\s+/).join(".") : "");
		return {err: sel + " is covered by " + name};
	}
	return {x, y};
})(%s)`

// Click clicks the centre of the element selector names with the mouse
// (press and release at that point, as a user would), after scrolling it
// into view. It fails when the element is hidden or another element
// covers that point. It does not wait for what the click starts: Submit
// does.
func (b *Browser) Click(ctx context.Context, selector string) error {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	return b.click(ctx, selector)
}

func (b *Browser) click(ctx context.Context, selector string) error {
	raw, err := b.Eval(ctx, fmt.Sprintf(pointJS, jsString(selector)))
	if err != nil {
		return fmt.Errorf("click %s: %w", selector, err)
	}
	var p struct {
		Err string  `json:"err"`
		X   float64 `json:"x"`
		Y   float64 `json:"y"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("click %s: %w", selector, err)
	}
	if p.Err != "" {
		return fmt.Errorf("click: %s", p.Err)
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": p.X, "y": p.Y}
		if typ != "mouseMoved" {
			ev["button"], ev["clickCount"] = "left", 1
		}
		if err := b.conn.call(ctx, b.session, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return fmt.Errorf("click %s: %w", selector, err)
		}
	}
	return nil
}

// validityJS yields why the form of the submit button would not be sent
// ("" when it would): the browser's own constraint validation.
const validityJS = `((sel) => {
	const el = document.querySelector(sel);
	if (!el) return "no element matches " + sel;
	const form = el.form;
	if (!form || form.noValidate || el.formNoValidate || form.checkValidity()) return "";
	return [...form.elements].filter(f => f.willValidate && !f.validity.valid)
		.map(f => (f.name || f.id || f.tagName.toLowerCase()) + ": " + f.validationMessage).join("; ");
})(%s)`

// Submit clicks the element selector names (a form's submit button) and
// waits until the navigation it starts has loaded or failed: Response
// then holds the final URL after redirects (see Response.URL). A form the
// browser's constraint validation would hold back (a required field
// empty, a pattern not matched) is an error naming the fields, as is a
// click that starts no navigation before the deadline; that error quotes
// the page's last console lines (a Content-Security-Policy violation, a
// script error).
func (b *Browser) Submit(ctx context.Context, selector string) (Response, error) {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	invalid, err := b.evalString(ctx, fmt.Sprintf(validityJS, jsString(selector)))
	if err != nil {
		return Response{}, fmt.Errorf("submit %s: %w", selector, err)
	}
	if invalid != "" {
		return Response{}, fmt.Errorf("submit %s: the browser would not send the form: %s", selector, invalid)
	}
	n, stop := b.watch()
	defer stop()
	if err := b.click(ctx, selector); err != nil {
		return Response{}, fmt.Errorf("submit: %w", err)
	}
	resp, err := n.wait(ctx, "", "submit "+selector)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = b.errNoNavigation(err)
		}
		return resp, err
	}
	return resp, nil
}
