package fakeretroarch

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
)

// Screenshot size: small, but a real picture a model can look at.
const shotW, shotH = 64, 48

// screenshotPNG draws a small picture that differs per game (colour from the
// CRC), per shot (a moving bar) and shows a pause mark, and encodes it.
func screenshotPNG(crc uint32, n int, paused bool) ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, shotW, shotH))
	base := color.RGBA{R: byte(crc >> 16), G: byte(crc >> 8), B: byte(crc), A: 0xff}
	for y := range shotH {
		for x := range shotW {
			c := base
			c.R += byte(x * 3)
			c.G += byte(y * 4)
			if (x+y)/8%2 == 0 {
				c.B ^= 0x40
			}
			img.SetRGBA(x, y, c)
		}
	}
	bar := (n * 7) % shotW
	for y := range shotH {
		for x := bar; x < min(bar+4, shotW); x++ {
			img.SetRGBA(x, y, color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff})
		}
	}
	if paused { // two vertical strokes, like a pause symbol
		for y := 4; y < 14; y++ {
			for _, x := range []int{4, 5, 8, 9} {
				img.SetRGBA(x, y, color.RGBA{A: 0xff})
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
