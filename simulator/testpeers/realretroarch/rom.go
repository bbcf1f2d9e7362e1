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
	return nrom(0, code, 0xC00E)
}

// nrom builds a 1 PRG + 1 CHR bank mapper-0 image with header byte 6 set to
// flags (0: horizontal mirroring, no battery), code at $C000, RESET at $C000
// and NMI and IRQ/BRK at irq.
func nrom(flags byte, code []byte, irq uint16) []byte {
	rom := make([]byte, inesHeaderSize+prgSize+chrSize)
	copy(rom, []byte{'N', 'E', 'S', 0x1a, 1, 1, flags}) // 1 PRG bank, 1 CHR bank, mapper 0
	prg := rom[inesHeaderSize : inesHeaderSize+prgSize]
	copy(prg, code)
	// Vectors at $FFFA: NMI, RESET, IRQ/BRK (little-endian).
	lo, hi := byte(irq), byte(irq>>8)
	vectors := []byte{lo, hi, 0x00, 0xC0, lo, hi}
	copy(prg[prgSize-len(vectors):], vectors)
	// A recognisable CHR pattern so the picture is not uniformly blank.
	chr := rom[inesHeaderSize+prgSize:]
	for i := range chr {
		chr[i] = byte(i * 7)
	}
	return rom
}

// BatteryROM's save layout. Its cartridge has 8 KiB of battery-backed
// PRG-RAM at $6000-$7FFF, which Nestopia hands RetroArch as the content's
// save RAM, so the .srm file (SRMPath) is that RAM byte for byte: file offset
// i is CPU address $6000+i.
const (
	// SRAMSize is the size of the battery RAM, and of the .srm file.
	SRAMSize = 8 * 1024
	// SRAMMarkerOffset is where in the save the marker sits (CPU $6000).
	SRAMMarkerOffset = 0x00
	// SRAMCounterOffset is the save's byte the program increments at each
	// reset (CPU $6010), so every run leaves a different save.
	SRAMCounterOffset = 0x10
	// SRAMCopyLen bytes of the save from SRAMMarkerOffset...
	SRAMCopyLen = 16
	// ...are what the program copies, at reset, before it touches the save,
	// to system RAM at SRAMCopyAddr: `READ_CORE_RAM 20 16` answers the first
	// 16 bytes of the save RetroArch loaded.
	SRAMCopyAddr = 0x20
	// SRAMCoreRAMAddr is where READ_CORE_RAM finds the battery RAM itself,
	// live: RetroArch 1.14 addresses core memory through its achievements
	// map, which puts Nestopia's 2 KiB of system RAM at $0000 and the save
	// RAM right after it ("Registered 0x2000 bytes of SRAM at $000800").
	SRAMCoreRAMAddr = 0x800
)

// SRAMMarker is what BatteryROM writes to the first 16 bytes of a blank save
// (all $00 or all $FF), so a save it made is recognisable.
var SRAMMarker = [SRAMCopyLen]byte{'C', 'A', 'B', 'I', 'N', 'E', 'T', '-', 'S', 'R', 'A', 'M', '-', 'v', '0', '1'}

// BatteryROM returns a mapper-0 iNES image like StubROM's but with the
// battery flag set (header byte 6 bit 1), so the core keeps 8 KiB of
// battery-backed PRG-RAM at $6000-$7FFF that RetroArch saves as
// <savefile_directory>/<rom stem>.srm (SRAMSize bytes) and loads at start.
// At reset the program copies $6000-$600F to $0020-$002F (SRAMCopyAddr),
// writes SRAMMarker to $6000-$600F if those bytes were all $00 or all $FF,
// increments $6010 (SRAMCounterOffset), then increments $0011 forever. Its
// CRC32 is not in Nestopia's database, so the core goes by the header.
func BatteryROM() []byte {
	code := []byte{
		0x78,       // $C000 SEI
		0xD8,       // $C001 CLD
		0xA2, 0xFF, // $C002 LDX #$FF
		0x9A,       // $C004 TXS
		0xA2, 0x0F, // $C005 LDX #$0F
		0xBD, 0x00, 0x60, // $C007 LDA $6000,X   <- copy
		0x95, 0x20, // $C00A STA $20,X
		0xCA,       // $C00C DEX
		0x10, 0xF8, // $C00D BPL copy
		0xA2, 0x0F, // $C00F LDX #$0F
		0xBD, 0x00, 0x60, // $C011 LDA $6000,X   <- zero
		0xD0, 0x06, // $C014 BNE notzero
		0xCA,       // $C016 DEX
		0x10, 0xF8, // $C017 BPL zero
		0x4C, 0x28, 0xC0, // $C019 JMP write (all $00)
		0xA2, 0x0F, // $C01C LDX #$0F          <- notzero
		0xBD, 0x00, 0x60, // $C01E LDA $6000,X   <- ff
		0xC9, 0xFF, // $C021 CMP #$FF
		0xD0, 0x0E, // $C023 BNE keep
		0xCA,       // $C025 DEX
		0x10, 0xF6, // $C026 BPL ff (falls through to write: all $FF)
		0xA2, 0x0F, // $C028 LDX #$0F          <- write
		0xBD, 0x40, 0xC0, // $C02A LDA marker,X  <- w
		0x9D, 0x00, 0x60, // $C02D STA $6000,X
		0xCA,       // $C030 DEX
		0x10, 0xF7, // $C031 BPL w
		0xEE, 0x10, 0x60, // $C033 INC $6010     <- keep
		0xE6, 0x11, // $C036 INC $11           <- loop
		0x4C, 0x36, 0xC0, // $C038 JMP loop
		0x40, // $C03B RTI (NMI and IRQ handler)
	}
	const markerAt = 0x40 // $C040
	rom := nrom(0x02, code, 0xC03B)
	copy(rom[inesHeaderSize+markerAt:], SRAMMarker[:])
	return rom
}
