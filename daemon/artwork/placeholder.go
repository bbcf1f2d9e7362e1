package artwork

import (
	"image"
	"image/color"
	"sync"
)

// placeholder is built once: the same bytes every time, so the retained
// idle picture is published again only when it really changes.
var placeholder = sync.OnceValue(func() []byte {
	const w, h = 512, 384
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		shade := uint8(0x12 + y*0x10/h)
		for x := 0; x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{shade, shade + 2, shade + 10, 0xff})
		}
	}
	// A pad's silhouette: a rounded body, a cross and two buttons.
	body := color.RGBA{0x3a, 0x40, 0x55, 0xff}
	mark := color.RGBA{0x8a, 0x93, 0xb0, 0xff}
	fill := func(x0, y0, x1, y1 int, c color.RGBA, round int) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				dx := max(x0+round-x, x-(x1-1-round), 0)
				dy := max(y0+round-y, y-(y1-1-round), 0)
				if dx*dx+dy*dy <= round*round {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	fill(136, 132, 376, 252, body, 48)
	fill(176, 180, 236, 200, mark, 4)
	fill(196, 160, 216, 220, mark, 4)
	fill(306, 166, 330, 190, mark, 12)
	fill(330, 196, 354, 220, mark, 12)
	b, err := toJPEG(img)
	if err != nil {
		panic("artwork: the placeholder does not encode: " + err.Error())
	}
	return b
})

// Placeholder is the picture shown while no game runs (a retained image
// topic is never left empty: an empty payload would delete it).
func Placeholder() []byte { return placeholder() }
