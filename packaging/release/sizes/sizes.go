// Package sizes says where the bytes of a release binary go (by package, by module, and the
// tables all packages share), for the release program to print. It lives apart from package
// release, which cabinet deploy links: reading ELF sections takes debug/elf, which a cabinet
// never needs.
package sizes

import (
	"cmp"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/batocera-cabinet/cabinet/packaging/release"
)

// Part is a share of a binary's bytes.
type Part struct {
	Name  string // a package or module path, or a description in parentheses
	Bytes int64
}

// Breakdown is where the bytes of a binary's loaded sections go. The
// stripped release binary has no symbols to attribute them by, so it is
// measured on an unstripped build of the same target: -s -w drop only the
// symbol table and DWARF, which are not loaded, and leave the layout of
// everything else as it is.
type Breakdown struct {
	// Packages is the code and data the symbol table attributes, summed by
	// package path, largest first.
	Packages []Part
	// Modules is Packages summed by module ("std" for the standard
	// library), largest first.
	Modules []Part
	// Shared is what no symbol covers, by section, largest first: mostly
	// the function and line tables (.gopclntab) and the type descriptors
	// and strings (.rodata) the linker lays out for all packages at once.
	Shared []Part
	// Loaded is the size of the sections loaded from the file, about the
	// size of the stripped binary less its headers.
	Loaded int64
}

// SizeBreakdown builds t without stripping it into a temporary file and
// reads where its bytes go.
func SizeBreakdown(ctx context.Context, srcDir string, t release.Target, s release.Stamp) (Breakdown, error) {
	dir, err := os.MkdirTemp("", "cabinet-sizes-")
	if err != nil {
		return Breakdown{}, fmt.Errorf("size breakdown: %w", err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, t.BinaryName())
	if err := release.BuildUnstripped(ctx, srcDir, t, bin, s); err != nil {
		return Breakdown{}, fmt.Errorf("size breakdown: %w", err)
	}
	return ReadBreakdown(bin)
}

// sharedLabel says what the bytes of a section that no symbol covers are.
func sharedLabel(section string) string {
	switch section {
	case ".gopclntab":
		return "(function and line tables: .gopclntab)"
	case ".rodata":
		return "(types, strings, constants: .rodata)"
	case ".text":
		return "(padding between functions: .text)"
	case ".data", ".noptrdata":
		return "(unnamed data: " + section + ")"
	}
	return "(other sections)"
}

// ReadBreakdown reads where the loaded bytes of the ELF binary name go.
// It needs the symbol table: build without -s.
func ReadBreakdown(name string) (Breakdown, error) {
	f, err := elf.Open(name)
	if err != nil {
		return Breakdown{}, fmt.Errorf("size breakdown: %w", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return Breakdown{}, fmt.Errorf("size breakdown: %s has no symbol table: measure a build without -s", name)
	}
	if err != nil {
		return Breakdown{}, fmt.Errorf("size breakdown: %w", err)
	}
	var b Breakdown
	loaded := make([]bool, len(f.Sections))
	for i, sec := range f.Sections {
		// Only what the loader maps from the file counts: not .bss (no
		// bytes in the file), nor the symbol table and DWARF (stripped).
		if sec.Flags&elf.SHF_ALLOC != 0 && sec.Type != elf.SHT_NOBITS {
			loaded[i] = true
			b.Loaded += int64(sec.Size)
		}
	}
	byPkg := map[string]int64{}
	covered := make([]int64, len(f.Sections))
	for _, s := range syms {
		i := int(s.Section)
		if s.Size == 0 || i <= 0 || i >= len(f.Sections) || !loaded[i] {
			continue
		}
		pkg := symbolPackage(s.Name)
		if pkg == linkerTables {
			continue // counted with its section's shared bytes
		}
		byPkg[pkg] += int64(s.Size)
		covered[i] += int64(s.Size)
	}
	b.Packages = sortedParts(byPkg)
	shared := map[string]int64{}
	for i, sec := range f.Sections {
		if rest := int64(sec.Size) - covered[i]; loaded[i] && rest > 0 {
			shared[sharedLabel(sec.Name)] += rest
		}
	}
	b.Shared = sortedParts(shared)
	var mainMod string
	var mods []string
	if bi, err := buildinfo.ReadFile(name); err == nil {
		mainMod = bi.Main.Path
		mods = append(mods, bi.Main.Path)
		for _, d := range bi.Deps {
			mods = append(mods, d.Path)
		}
	}
	b.Modules = byModule(b.Packages, mainMod, mods)
	return b, nil
}

// linkerTables is what symbolPackage says of the linker's own symbols
// (go:func.*, go:itab.*, type:*), which hold tables for all packages.
const linkerTables = "(linker tables)"

// symbolPackage is the package a linker symbol belongs to, such as
// "github.com/rs/zerolog" for github.com/rs/zerolog.(*Event).Str, or a
// description in parentheses for what belongs to none.
func symbolPackage(sym string) string {
	// Generated equality functions belong to their type's package.
	if rest, ok := strings.CutPrefix(sym, "type:.eq."); ok {
		for len(rest) > 0 && (rest[0] == '*' || rest[0] == '[') {
			if rest[0] == '*' {
				rest = rest[1:]
			} else if i := strings.IndexByte(rest, ']'); i >= 0 {
				rest = rest[i+1:]
			} else {
				break
			}
		}
		sym = rest
	}
	switch {
	case strings.HasPrefix(sym, "go:"), strings.HasPrefix(sym, "type:"):
		return linkerTables
	case strings.HasPrefix(sym, "$"):
		return "(constants)"
	case strings.HasPrefix(sym, "go.shape."):
		return "(generic shapes)"
	}
	// The package path ends at the first dot after its last slash, before
	// any type arguments or receiver; the linker escapes dots in the last
	// element of a path (yaml.v3 is yaml%2ev3).
	if i := strings.IndexAny(sym, "[("); i >= 0 {
		sym = sym[:i]
	}
	slash := strings.LastIndexByte(sym, '/') + 1
	dot := strings.IndexByte(sym[slash:], '.')
	if dot <= 0 {
		return "(other)"
	}
	return strings.ReplaceAll(sym[:slash+dot], "%2e", ".")
}

// byModule sums package parts by the longest module path that holds each
// package; package main is mainMod's, and packages of no listed module are
// the standard library's.
func byModule(pkgs []Part, mainMod string, mods []string) []Part {
	// Longest first, so that a nested module wins over its parent.
	mods = slices.Clone(mods)
	slices.SortFunc(mods, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	sums := map[string]int64{}
	for _, p := range pkgs {
		mod := "std"
		switch {
		case strings.HasPrefix(p.Name, "("):
			mod = p.Name
		case p.Name == "main" && mainMod != "":
			mod = mainMod
		}
		for _, m := range mods {
			if m != "" && (p.Name == m || strings.HasPrefix(p.Name, m+"/")) {
				mod = m
				break
			}
		}
		sums[mod] += p.Bytes
	}
	return sortedParts(sums)
}

// sortedParts lists sums largest first, by name among equals.
func sortedParts(sums map[string]int64) []Part {
	parts := make([]Part, 0, len(sums))
	for name, n := range sums {
		parts = append(parts, Part{Name: name, Bytes: n})
	}
	slices.SortFunc(parts, func(a, b Part) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Name, b.Name))
	})
	return parts
}

// WriteBreakdown prints the n largest packages and modules of b and the
// shared tables, each with its share of the loaded bytes.
func WriteBreakdown(w io.Writer, b Breakdown, n int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	table := func(title string, parts []Part, top int) {
		fmt.Fprintf(tw, "%s\t   MiB\t share\n", title)
		for _, p := range parts[:min(top, len(parts))] {
			fmt.Fprintf(tw, "%s\t%6.2f\t%6s\n", p.Name, mb(p.Bytes), share(p.Bytes, b.Loaded))
		}
		if len(parts) > top {
			var rest int64
			for _, p := range parts[top:] {
				rest += p.Bytes
			}
			fmt.Fprintf(tw, "(%d more)\t%6.2f\t%6s\n", len(parts)-top, mb(rest), share(rest, b.Loaded))
		}
		fmt.Fprintln(tw)
	}
	var inPkgs, inShared int64
	for _, p := range b.Packages {
		inPkgs += p.Bytes
	}
	for _, p := range b.Shared {
		inShared += p.Bytes
	}
	fmt.Fprintf(tw, "loaded sections: %.2f MiB; %s in symbols of %d packages, %s in tables shared by all\n\n",
		mb(b.Loaded), share(inPkgs, b.Loaded), len(b.Packages), share(inShared, b.Loaded))
	table("package", b.Packages, n)
	table("module", b.Modules, n)
	table("shared by all packages", b.Shared, len(b.Shared))
	return tw.Flush()
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func share(n, of int64) string {
	if of <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of))
}
