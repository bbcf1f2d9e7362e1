package realretroarch

// iNES layout of the stub ROM: a 16-byte header, one 16 KiB PRG bank mapped at
// $C000 (mirrored at $8000) and one 8 KiB CHR bank, mapper 0 (NROM).
const (
	inesHeaderSize = 16
	prgSize        = 16 * 1024
	chrSize        = 8 * 1024
)

// StubROM returns a tiny valid mapper-0 iNES image: a program that stores 0x42
// at $0010 and then increments $0011 forever, so the core has live RAM and a
// real frame loop. It is generated rather than shipped so no ROM file needs a
// licence, and the bytes are fixed so the content CRC32 is stable.
func StubROM() []byte {
	rom := make([]byte, inesHeaderSize+prgSize+chrSize)
	copy(rom, []byte{'N', 'E', 'S', 0x1a, 1, 1}) // 1 PRG bank, 1 CHR bank, flags 0: mapper 0, horizontal mirroring
	prg := rom[inesHeaderSize : inesHeaderSize+prgSize]
	code := []byte{
		0x78,       // $C000 SEI
		0xD8,       // $C001 CLD
		0xA2, 0xFF, // $C002 LDX #$FF
		0x9A,       // $C004 TXS
		0xA9, 0x42, // $C005 LDA #$42
		0x85, 0x10, // $C007 STA $10
		0xE6, 0x11, // $C009 INC $11   <- loop
		0x4C, 0x09, 0xC0, // $C00B JMP $C009
		0x40, // $C00E RTI (NMI and IRQ handler)
	}
	copy(prg, code)
	// Vectors at $FFFA: NMI, RESET, IRQ/BRK (little-endian).
	vectors := []byte{0x0E, 0xC0, 0x00, 0xC0, 0x0E, 0xC0}
	copy(prg[prgSize-len(vectors):], vectors)
	// A recognisable CHR pattern so the picture is not uniformly blank.
	chr := rom[inesHeaderSize+prgSize:]
	for i := range chr {
		chr[i] = byte(i * 7)
	}
	return rom
}
