package tools

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func images(res *mcp.CallToolResult) []mcp.ImageContent {
	var out []mcp.ImageContent
	for _, c := range res.Content {
		if img, ok := c.(mcp.ImageContent); ok {
			out = append(out, img)
		}
	}
	return out
}

func TestTakeScreenshotReturnsTheNewImage(t *testing.T) {
	r := newRig(t, rigConfig{})
	r.launch("nes", "Tetris")
	// An older screenshot must not be taken for the new one.
	if err := os.MkdirAll(r.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.shots, "old.png"), []byte("\x89PNG\r\n\x1a\nold-IEND\xae\x42\x60\x82"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res screenshotResult
	call := r.ok("batocera_take_screenshot", nil, &res)
	if res.Outcome != "done" || strings.Join(res.Sent, "|") != "UDP SCREENSHOT" || res.Screenshot == nil {
		t.Fatalf("got %+v", res)
	}
	shot := res.Screenshot
	if !strings.HasPrefix(shot.File, "Tetris (USA)-") || shot.Width != 64 || shot.Height != 48 || !shot.Returned {
		t.Errorf("screenshot: got %+v", shot)
	}
	imgs := images(call)
	if len(imgs) != 1 || imgs[0].MIMEType != "image/png" {
		t.Fatalf("image content: got %+v", call.Content)
	}
	data, err := base64.StdEncoding.DecodeString(imgs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, _ := os.ReadFile(filepath.Join(r.shots, shot.File))
	if !bytes.Equal(data, onDisk) || int64(len(data)) != shot.SizeBytes {
		t.Errorf("the image is not the new file (%d bytes, file %d)", len(data), len(onDisk))
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("not a PNG: %v", err)
	}
}

func TestTakeScreenshotTooLarge(t *testing.T) {
	r := newRig(t, rigConfig{opts: Options{MaxScreenshotBytes: 100}})
	r.launch("nes", "Tetris")
	var res screenshotResult
	call := r.ok("batocera_take_screenshot", nil, &res)
	if res.Screenshot == nil || res.Screenshot.Returned || len(images(call)) != 0 || len(res.Warnings) != 1 ||
		!strings.Contains(res.Warnings[0], "more than the 100 returned") {
		t.Errorf("got %+v with %d images", res, len(images(call)))
	}
}

func TestTakeScreenshotWithoutAFile(t *testing.T) {
	r := newRig(t, rigConfig{opts: Options{ScreenshotWait: 200 * time.Millisecond}, deps: func(d *Deps) {
		d.Paths.ScreenshotDir = filepath.Join(t.TempDir(), "elsewhere")
	}})
	r.launch("nes", "Tetris")
	var res screenshotResult
	r.ok("batocera_take_screenshot", nil, &res)
	if res.Outcome != "done" || res.Screenshot != nil || len(res.Warnings) != 1 ||
		!strings.Contains(res.Warnings[0], "set cabinet.retroarch.screenshot_dir") {
		t.Errorf("got %+v", res)
	}
	r2 := newRig(t, rigConfig{deps: func(d *Deps) { d.Paths.ScreenshotDir = "" }})
	r2.launch("nes", "Tetris")
	r2.ok("batocera_take_screenshot", nil, &res)
	if res.Screenshot != nil || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "is not set") {
		t.Errorf("no folder configured: got %+v", res)
	}
}

func TestCompletePNG(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		body string
		want bool
	}{
		"complete":  {"\x89PNG\r\n\x1a\n....IEND\xae\x42\x60\x82", true},
		"growing":   {"\x89PNG\r\n\x1a\n....IDAT", false},
		"not a png": {"GIF89a....IEND\xae\x42\x60\x82", false},
		"tiny":      {"\x89PNG", false},
	} {
		p := filepath.Join(dir, name+".png")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := completePNG(p); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}
