package artwork

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func picture(w, h int, alpha uint8) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x ^ y), alpha})
		}
	}
	return img
}

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkJPEG: what Home Assistant gets is a JPEG within the limits.
func checkJPEG(t *testing.T, b []byte, wantW, wantH int) {
	t.Helper()
	if len(b) == 0 || len(b) > MaxBytes {
		t.Fatalf("%d bytes, want 1..%d", len(b), MaxBytes)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a JPEG: %v", err)
	}
	if cfg.Width != wantW || cfg.Height != wantH {
		t.Errorf("%d×%d, want %d×%d", cfg.Width, cfg.Height, wantW, wantH)
	}
}

func TestEncode(t *testing.T) {
	pngEnc := func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) }
	jpgEnc := func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) }
	gifEnc := func(b *bytes.Buffer, i image.Image) error { return gif.Encode(b, i, nil) }
	tests := []struct {
		name         string
		in           []byte
		wantW, wantH int
	}{
		{"a small PNG keeps its size", encoded(t, pngEnc, picture(300, 200, 0xff)), 300, 200},
		{"a wide JPEG is scaled to 512 on its long side", encoded(t, jpgEnc, picture(1024, 768, 0xff)), 512, 384},
		{"a tall PNG cover", encoded(t, pngEnc, picture(600, 1200, 0xff)), 256, 512},
		{"a transparent PNG marquee", encoded(t, pngEnc, picture(800, 200, 0x40)), 512, 128},
		{"a GIF", encoded(t, gifEnc, picture(64, 64, 0xff)), 64, 64},
		{"a one-pixel-high strip", encoded(t, pngEnc, picture(4000, 1, 0xff)), 512, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Encode(bytes.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			checkJPEG(t, out, tt.wantW, tt.wantH)
		})
	}
}

// A picture of noise compresses badly: the quality goes down until it fits.
func TestEncodeNoiseFitsMaxBytes(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 512, 512))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.UintN(256))
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	out, err := Encode(&b)
	if err != nil {
		t.Fatal(err)
	}
	checkJPEG(t, out, 512, 512)
}

// pngClaiming is a PNG whose header claims w×h pixels, with no data.
func pngClaiming(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

// TestHostilePictures: each is refused with the reason, quickly and
// within bounded memory; none becomes a payload.
func TestHostilePictures(t *testing.T) {
	good := encoded(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) }, picture(400, 300, 0xff))
	big := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, MaxInputBytes)...)
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrNotImage},
		{"an SVG", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`), ErrNotImage},
		{"text", []byte("not a picture at all\n"), ErrNotImage},
		{"a truncated JPEG", good[:len(good)/3], ErrNotImage},
		{"a JPEG header only", good[:4], ErrNotImage},
		{"a PNG claiming 100000×100000 pixels", pngClaiming(100_000, 100_000), ErrTooLarge},
		{"a PNG claiming 0×10 pixels", pngClaiming(0, 10), ErrNotImage},
		{"a PNG header with no data", pngClaiming(64, 64), ErrNotImage},
		{"a 16 MiB file", big, ErrTooLarge},
		{"a WebP header only", []byte("RIFF\x10\x00\x00\x00WEBPVP8 "), ErrNotImage},
		{"a BMP", append([]byte("BM"), make([]byte, 64)...), ErrNotImage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			out, err := Encode(bytes.NewReader(tt.in))
			if !errors.Is(err, tt.want) || out != nil {
				t.Errorf("Encode = %d bytes, %v; want %v", len(out), err, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestEncodeFile(t *testing.T) {
	dir := t.TempDir()
	cover := filepath.Join(dir, "cover.png")
	var b bytes.Buffer
	if err := png.Encode(&b, picture(1000, 1000, 0xff)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cover, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := EncodeFile(cover)
	if err != nil {
		t.Fatal(err)
	}
	checkJPEG(t, out, 512, 512)
	if _, err := EncodeFile(filepath.Join(dir, "missing.png")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := EncodeFile(dir); !errors.Is(err, ErrNotImage) {
		t.Errorf("a folder: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if _, err := EncodeFile(fifo); !errors.Is(err, ErrNotImage) { // never opened: no hang
			t.Errorf("a FIFO: %v", err)
		}
	}
	huge := filepath.Join(dir, "huge.png")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(20 << 20)
	f.Close()
	if _, err := EncodeFile(huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 20 MB file: %v", err)
	}
}

func TestPlaceholder(t *testing.T) {
	p := Placeholder()
	checkJPEG(t, p, 512, 384)
	if !bytes.Equal(p, Placeholder()) {
		t.Error("the placeholder changed between calls")
	}
}

func FuzzEncode(f *testing.F) {
	var b bytes.Buffer
	png.Encode(&b, picture(40, 30, 0x80))
	f.Add(b.Bytes())
	b.Reset()
	jpeg.Encode(&b, picture(40, 30, 0xff), nil)
	f.Add(b.Bytes())
	f.Add(pngClaiming(1<<20, 1<<20))
	f.Add([]byte("GIF89a\x01\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Encode(bytes.NewReader(in))
		if err != nil {
			if out != nil {
				t.Fatal("bytes with an error")
			}
			return
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
		if err != nil || len(out) > MaxBytes || cfg.Width > MaxSide || cfg.Height > MaxSide {
			t.Fatalf("published %d bytes, %d×%d, %v", len(out), cfg.Width, cfg.Height, err)
		}
	})
}

// BenchmarkEncodeCover: a 1000×1400 PNG cover (a scraper's usual size) to
// the published JPEG, beside the baseline of only decoding it.
func BenchmarkEncodeCover(b *testing.B) {
	var in bytes.Buffer
	if err := png.Encode(&in, picture(1000, 1400, 0xff)); err != nil {
		b.Fatal(err)
	}
	b.Run("baseline png.Decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := png.Decode(bytes.NewReader(in.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := Encode(bytes.NewReader(in.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
	})
}
