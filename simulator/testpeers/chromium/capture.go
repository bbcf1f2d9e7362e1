package chromium

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
)

// Screenshot writes a PNG of the page's viewport to path.
func (b *Browser) Screenshot(ctx context.Context, path string) error {
	var r struct {
		Data string `json:"data"`
	}
	if err := b.Call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return fmt.Errorf("screenshot: decode: %w", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return nil
}

// Cookie is a cookie the browser holds.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"` // seconds since the epoch; -1 for a session cookie
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	Session  bool    `json:"session"`
	SameSite string  `json:"sameSite"` // "Strict", "Lax", "None", or "" when unset
}

// Cookies are all the cookies the browser holds, of every site (not only
// the page's: after a redirect to a callback the page's origin is the
// callback's).
func (b *Browser) Cookies(ctx context.Context) ([]Cookie, error) {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	var r struct {
		Cookies []Cookie `json:"cookies"`
	}
	if err := b.conn.call(ctx, "", "Storage.getCookies", nil, &r); err != nil {
		return nil, fmt.Errorf("cookies: %w", err)
	}
	return r.Cookies, nil
}

// Viewport is the emulated screen: its size in CSS pixels, device pixels
// per CSS pixel (0 means 1), and whether it is a phone (the page's
// <meta name=viewport> applies, overlay scrollbars, touch input).
type Viewport struct {
	Width, Height int
	Scale         float64
	Mobile        bool
}

// Phone is a common phone screen (390×844 CSS pixels), at scale 1 so
// screenshots stay small.
var Phone = Viewport{Width: 390, Height: 844, Scale: 1, Mobile: true}

// SetViewport emulates the screen v for the page from now on
// (Emulation.setDeviceMetricsOverride, and touch input for a phone).
func (b *Browser) SetViewport(ctx context.Context, v Viewport) error {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	if v.Width <= 0 || v.Height <= 0 {
		return fmt.Errorf("set viewport: size %dx%d: want positive sizes", v.Width, v.Height)
	}
	if v.Scale == 0 {
		v.Scale = 1
	}
	err := b.conn.call(ctx, b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": v.Width, "height": v.Height, "deviceScaleFactor": v.Scale, "mobile": v.Mobile,
	}, nil)
	if err == nil {
		touch := map[string]any{"enabled": v.Mobile}
		if v.Mobile {
			touch["maxTouchPoints"] = 5
		}
		err = b.conn.call(ctx, b.session, "Emulation.setTouchEmulationEnabled", touch, nil)
	}
	if err != nil {
		return fmt.Errorf("set viewport: %w", err)
	}
	return nil
}
