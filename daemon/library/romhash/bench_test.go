package romhash

import (
	"archive/zip"
	"math/rand"
	"testing"
)

// BenchmarkFile hashes an 8 MiB ROM raw and zipped, beside a baseline of the three hashes over
// the same bytes in memory, in MB/s.
func BenchmarkFile(b *testing.B) {
	data := make([]byte, 8<<20)
	rand.New(rand.NewSource(1)).Read(data[:len(data)/2]) // half noise, half zeros: compressible
	dir := b.TempDir()
	raw := writeFile(b, dir, "Game.bin", data)
	zipped := writeFile(b, dir, "Game.zip", makeZip(b, zent{name: "Game.bin", data: data, method: zip.Deflate}))
	b.Run("BaselineInMemory", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			d := newDigest()
			d.Write(data)
			d.blanked()
		}
	})
	for _, tc := range []struct{ name, path string }{{"Raw", raw}, {"ZipDeflate", zipped}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				if _, err := File(tc.path, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
