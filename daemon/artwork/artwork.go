// Package artwork turns a game's picture (ES's box art, marquee or a
// screenshot) into what Home Assistant's MQTT image entity is given: one
// JPEG of at most MaxSide pixels on its long side and MaxBytes bytes.
// Pictures come from disks and servers Cabinet does not control, so
// reading is bounded in bytes, pixels and formats before anything is
// decoded: a 20 MB PNG, a truncated JPEG, an SVG or a file that is no
// image gets an error saying so, never a broken or huge payload.
package artwork

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Limits of what is read and what is published.
const (
	// MaxSide is the long side of a published picture, in pixels.
	MaxSide = 512
	// MaxBytes bounds a published JPEG.
	MaxBytes = 200 << 10
	// MaxInputBytes bounds a picture read from disk (ES's scraper keeps
	// covers of a few hundred KB; a 20 MB PNG is refused).
	MaxInputBytes = 16 << 20
	// MaxPixels bounds a picture's decoded size (4 bytes a pixel: 64 MiB)
	// whatever its file size: a small PNG can claim 100,000² pixels.
	MaxPixels = 16_000_000
	// ContentType is what every published picture is.
	ContentType = "image/jpeg"
)

// Errors callers can tell apart (errors.Is).
var (
	ErrNotImage = errors.New("not a picture Cabinet reads (JPEG, PNG, GIF or WebP)")
	ErrTooLarge = errors.New("the picture is too large")
)

// decoders are the formats read, by their magic bytes (an SVG, a BMP or a
// TIFF is refused before any decoder sees it).
var decoders = []struct {
	name   string
	magic  func([]byte) bool
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}{
	{"jpeg", func(b []byte) bool { return len(b) >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff }, jpeg.DecodeConfig, jpeg.Decode},
	{"png", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) }, png.DecodeConfig, png.Decode},
	{"gif", func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}, gif.DecodeConfig, gif.Decode},
	{"webp", func(b []byte) bool { return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" }, webp.DecodeConfig, webp.Decode},
}

// Encode reads a picture of at most MaxInputBytes from r and returns it as
// a JPEG of at most MaxSide pixels on its long side and MaxBytes bytes,
// transparent parts on a dark background.
func Encode(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the picture: %w", err)
	}
	if len(b) > MaxInputBytes {
		return nil, fmt.Errorf("%w: over %d MiB", ErrTooLarge, MaxInputBytes>>20)
	}
	return encode(b)
}

// EncodeFile is Encode of a regular file (a link is followed; a folder, a
// device or a FIFO is refused before it is opened for reading).
func EncodeFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, ErrNotImage)
	}
	if fi.Size() > MaxInputBytes {
		return nil, fmt.Errorf("%s: %w: %d MiB (at most %d)", path, ErrTooLarge, fi.Size()>>20, MaxInputBytes>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := Encode(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func encode(b []byte) ([]byte, error) {
	for _, d := range decoders {
		if !d.magic(b) {
			continue
		}
		cfg, err := d.config(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%w: a damaged %s (%v)", ErrNotImage, d.name, err)
		}
		if cfg.Width <= 0 || cfg.Height <= 0 {
			return nil, fmt.Errorf("%w: a %s of %d×%d pixels", ErrNotImage, d.name, cfg.Width, cfg.Height)
		}
		if int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
			return nil, fmt.Errorf("%w: %d×%d pixels (at most %d million)", ErrTooLarge, cfg.Width, cfg.Height, MaxPixels/1_000_000)
		}
		img, err := d.decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%w: a damaged %s (%v)", ErrNotImage, d.name, err)
		}
		return toJPEG(img)
	}
	return nil, ErrNotImage
}

// background is what transparent parts of a picture are shown on.
var background = color.RGBA{0x12, 0x14, 0x1c, 0xff}

// toJPEG scales img to fit MaxSide and encodes it, lowering the quality
// until it fits MaxBytes.
func toJPEG(img image.Image) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > MaxSide || h > MaxSide {
		if w >= h {
			w, h = MaxSide, max(1, h*MaxSide/w)
		} else {
			w, h = max(1, w*MaxSide/h), MaxSide
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(background), image.Point{}, draw.Src)
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Over, nil)
	var buf bytes.Buffer
	for q := 85; q >= 30; q -= 10 {
		buf.Reset()
		if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: q}); err != nil {
			return nil, fmt.Errorf("encode the picture: %w", err)
		}
		if buf.Len() <= MaxBytes {
			return bytes.Clone(buf.Bytes()), nil
		}
	}
	return nil, fmt.Errorf("%w: over %d KB even at a low quality", ErrTooLarge, MaxBytes>>10)
}
