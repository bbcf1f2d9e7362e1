package tools

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

type screenshotResult struct {
	ActionResult
	Screenshot *shotInfo `json:"screenshot"`
	png        []byte    // returned as image content, not in the JSON
}

type shotInfo struct {
	File      string `json:"file"`
	SizeBytes int64  `json:"size_bytes"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Returned  bool   `json:"returned"`
}

func (r screenshotResult) text() string {
	t := r.ActionResult.text()
	if s := r.Screenshot; s != nil {
		t += fmt.Sprintf("\nScreenshot %s: %dx%d, %d bytes", s.File, s.Width, s.Height, s.SizeBytes)
		if s.Returned {
			t += " (attached)."
		} else {
			t += " (too large to attach)."
		}
	}
	return t
}

func (r screenshotResult) extras() []mcp.Content {
	if r.png == nil {
		return nil
	}
	return []mcp.Content{mcp.NewImageContent(base64.StdEncoding.EncodeToString(r.png), "image/png")}
}

// shotFolder is where RetroArch saves screenshots and how long and how much
// of a new one batocera_take_screenshot waits for and returns.
type shotFolder struct {
	dir      string        // Paths.ScreenshotDir; "" when unknown
	wait     time.Duration // Options.ScreenshotWait
	maxBytes int64         // Options.MaxScreenshotBytes
}

func takeScreenshotTool(ra raLink, g *guard, cabinet string, shots shotFolder) (mcp.Tool, server.ToolHandlerFunc) {
	t := define("batocera_take_screenshot", "Take screenshot",
		"Take a screenshot of the running RetroArch game, save it on the cabinet and return it as an image, so "+
			"you can see the screen. Needs a RetroArch game with network commands on.",
		writes, false,
		withOutput(actionProps(req("screenshot", nullable(object("The new screenshot file, null when none appeared.",
			req("file", str("File name in the screenshot folder.")),
			req("size_bytes", integer("File size.")),
			req("width", integer("Width in pixels.")), req("height", integer("Height in pixels.")),
			req("returned", boolean("Whether the image is attached (false when it is too large)."))))))...))
	return t, typed(func(ctx context.Context, _ none) (screenshotResult, error) {
		return takeScreenshot(ctx, ra, g, cabinet, shots)
	})
}

func takeScreenshot(ctx context.Context, ra raLink, g *guard, cabinet string,
	shots shotFolder) (screenshotResult, error) {
	st, err := ra.playing(ctx, "take a screenshot")
	if err != nil {
		return screenshotResult{}, err
	}
	before := listPNGs(shots.dir)
	sent := []string{udp(retroarch.CmdScreenshot)}
	var warnings []string
	dry, err := g.run(ctx, action{what: "take a screenshot", budget: budgetControl, sent: sent,
		send: func(ctx context.Context) error { return ra.send(ctx, retroarch.CmdScreenshot) }})
	switch {
	case err != nil:
		return screenshotResult{}, err
	case dry:
		return screenshotResult{ActionResult: actionResult(cabinet, outcomeDryRun,
			"Would take a screenshot of "+describeRA(st)+".", sent, warnings)}, nil
	}
	res := screenshotResult{}
	detail := "Took a screenshot of " + describeRA(st) + "."
	if shots.dir == "" {
		warnings = append(warnings, "cabinet.retroarch.screenshot_dir is not set, so the image cannot be returned.")
		res.ActionResult = actionResult(cabinet, outcomeDone, detail, sent, warnings)
		return res, nil
	}
	path, err := shots.await(ctx, before)
	if err != nil {
		warnings = append(warnings, err.Error())
		res.ActionResult = actionResult(cabinet, outcomeDone, detail, sent, warnings)
		return res, nil
	}
	info, img, warn := shots.read(path)
	if warn != "" {
		warnings = append(warnings, warn)
	}
	res.Screenshot, res.png = info, img
	res.ActionResult = actionResult(cabinet, outcomeDone, detail, sent, warnings)
	return res, nil
}

// fileStamp identifies a version of a file: RetroArch names screenshots by
// the second, so a second shot in the same second replaces the file.
type fileStamp struct {
	mod  time.Time
	size int64
}

// listPNGs maps the regular .png files of dir to their stamps; a missing or
// unreadable folder is empty (RetroArch may create it with the first shot).
func listPNGs(dir string) map[string]fileStamp {
	out := map[string]fileStamp{}
	if dir == "" {
		return out
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.EqualFold(filepath.Ext(e.Name()), ".png") {
			continue // symlinks too: only files RetroArch wrote
		}
		if fi, err := e.Info(); err == nil {
			out[e.Name()] = fileStamp{fi.ModTime(), fi.Size()}
		}
	}
	return out
}

// await waits for a complete PNG in the folder that is not in before (or
// has changed since), newest first, for at most wait. RetroArch does not
// say where it saved the screenshot, so the folder is watched.
func (sf shotFolder) await(ctx context.Context, before map[string]fileStamp) (string, error) {
	dir := sf.dir
	ctx, cancel := context.WithTimeout(ctx, sf.wait)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		var best string
		var bestMod time.Time
		for name, st := range listPNGs(dir) {
			if old, ok := before[name]; ok && old == st {
				continue
			}
			if (best == "" || st.mod.After(bestMod)) && completePNG(filepath.Join(dir, name)) {
				best, bestMod = name, st.mod
			}
		}
		if best != "" {
			return filepath.Join(dir, best), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no new screenshot appeared in %s within %v: RetroArch may save them elsewhere "+
				"(set cabinet.retroarch.screenshot_dir to RetroArch's screenshot folder)",
				untrusted.Clean(dir, maxPath), sf.wait)
		case <-tick.C:
		}
	}
}

const (
	pngSignature = "\x89PNG\r\n\x1a\n"
	pngEnd       = "IEND\xae\x42\x60\x82" // the IEND chunk type and its CRC
)

// completePNG reports whether the file starts like a PNG and ends with its
// IEND chunk: RetroArch writes screenshots in place, so a file may still be
// growing.
func completePNG(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || string(head[:]) != pngSignature {
		return false
	}
	var tail [8]byte
	if _, err := f.Seek(-8, io.SeekEnd); err != nil {
		return false
	}
	_, err = io.ReadFull(f, tail[:])
	return err == nil && string(tail[:]) == pngEnd
}

// read reads the screenshot when it fits maxBytes; width and height come
// from its IHDR chunk.
func (sf shotFolder) read(path string) (*shotInfo, []byte, string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "The screenshot could not be read: " + untrusted.Clean(err.Error(), maxErrorRunes)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, "The screenshot could not be read: " + untrusted.Clean(err.Error(), maxErrorRunes)
	}
	info := &shotInfo{File: untrusted.Clean(filepath.Base(path), maxName), SizeBytes: fi.Size()}
	var ihdr [24]byte
	if _, err := io.ReadFull(f, ihdr[:]); err == nil && string(ihdr[12:16]) == "IHDR" {
		info.Width = int(binary.BigEndian.Uint32(ihdr[16:20]))
		info.Height = int(binary.BigEndian.Uint32(ihdr[20:24]))
	}
	if fi.Size() > sf.maxBytes {
		return info, nil, fmt.Sprintf("The screenshot is %d bytes, more than the %d returned; it is saved on the cabinet.",
			fi.Size(), sf.maxBytes)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return info, nil, "The screenshot could not be read: " + untrusted.Clean(err.Error(), maxErrorRunes)
	}
	img, err := io.ReadAll(io.LimitReader(f, sf.maxBytes+1))
	if err != nil || int64(len(img)) > sf.maxBytes {
		return info, nil, "The screenshot changed while it was read; it is saved on the cabinet."
	}
	info.Returned = true
	return info, img, ""
}
