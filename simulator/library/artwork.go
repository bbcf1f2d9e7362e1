package library

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"path"
	"strings"
)

// MediaFile is a picture file the fixture's games name (gamelist image,
// thumbnail or marquee), to be written where ES would find it. Size, when
// larger than len(Data), is the file's length: the rest is a hole, so a
// 20 MB picture costs nothing to lay out.
type MediaFile struct {
	Path string // absolute, under the ROMs root
	Data []byte
	Size int64
}

// Hostile pictures are named by a marker before the extension, so the
// fixture says what each game's art is:
//
//	-bomb      a PNG claiming 100,000 × 100,000 pixels in a few bytes
//	-truncated the first half of a real JPEG
//	-text      a text file with a picture's extension
//	-huge      a PNG header, then 20 MB
//	-missing   named in the gamelist, not on disk
//	.svg       an SVG (ES's scraper can save one; Cabinet reads no SVG)
//
// Every other name gets a real picture of its own colours, so the artwork
// changes visibly from game to game.
const hugeMediaBytes = 20 << 20

// MediaFiles lists the picture files of every game's image, thumbnail and
// marquee, resolved the way ES resolves a gamelist's "./" paths: against
// the system's folder.
func (l *Library) MediaFiles() []MediaFile {
	var out []MediaFile
	seen := map[string]bool{}
	for _, g := range l.AllGames() {
		for _, key := range []string{"thumbnail", "marquee", "image"} {
			p := l.MediaPath(g, key)
			if p == "" || seen[p] || strings.Contains(p, "-missing.") {
				continue
			}
			seen[p] = true
			f := MediaFile{Path: p, Data: mediaData(p)}
			if strings.Contains(p, "-huge.") {
				f.Size = hugeMediaBytes
			}
			out = append(out, f)
		}
	}
	return out
}

// MediaPath is the absolute path of a game's media key ("" when unset), as
// ES holds it in memory and serves it with localpaths=true.
func (l *Library) MediaPath(g Game, key string) string {
	v := g.Meta(key)
	if v == "" {
		return ""
	}
	if rel, ok := strings.CutPrefix(v, "./"); ok {
		return path.Join(l.RomsRoot(), g.System, rel)
	}
	if !path.IsAbs(v) {
		return ""
	}
	return v
}

func mediaData(p string) []byte {
	name := strings.ToLower(path.Base(p))
	switch {
	case strings.HasSuffix(name, ".svg"):
		return []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="400" height="560"><rect width="400" height="560" fill="#c00"/></svg>`)
	case strings.Contains(name, "-text."):
		return []byte("this is a text file, not a picture\n")
	case strings.Contains(name, "-bomb."):
		return bombPNG()
	case strings.Contains(name, "-huge."):
		return []byte("\x89PNG\r\n\x1a\n")
	case strings.Contains(name, "-truncated."):
		b := cover(p, "jpeg")
		return b[:len(b)/2]
	case strings.HasSuffix(name, ".jpg"), strings.HasSuffix(name, ".jpeg"):
		return cover(p, "jpeg")
	}
	return cover(p, "png")
}

// cover is a 400 × 560 picture in two colours drawn from the path: a
// diagonal band on a background, so every game's art differs.
func cover(p, format string) []byte {
	sum := md5.Sum([]byte(p))
	bg := color.RGBA{sum[0], sum[1], sum[2], 255}
	fg := color.RGBA{255 - sum[0], 255 - sum[1], 255 - sum[2], 255}
	img := image.NewRGBA(image.Rect(0, 0, 400, 560))
	for y := 0; y < 560; y++ {
		for x := 0; x < 400; x++ {
			c := bg
			if d := x - y*400/560; d > -60 && d < 60 {
				c = fg
			}
			img.SetRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if format == "jpeg" {
		jpeg.Encode(&b, img, &jpeg.Options{Quality: 85})
	} else {
		png.Encode(&b, img)
	}
	return b.Bytes()
}

// bombPNG is a valid PNG signature and IHDR for 100,000² RGBA pixels
// (40 GB decoded), then a tiny IDAT and IEND: what a decoder must refuse
// from the header alone.
func bombPNG() []byte {
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 1, 1)))
	out := b.Bytes()
	// IHDR's width and height follow the signature (8), length (4) and
	// type (4); its CRC (over type and data) is made to match again.
	for _, off := range []int{16, 20} {
		binary.BigEndian.PutUint32(out[off:], 100_000)
	}
	binary.BigEndian.PutUint32(out[29:], crc32.ChecksumIEEE(out[12:29]))
	return out
}
