package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"text/tabwriter"
	"time"
)

// Options say what a release run builds and where it puts it.
type Options struct {
	SrcDir  string    // the module's root
	OutDir  string    // where the binaries, archives and SHA256SUMS go
	Targets []Target  // what to build; nil is every target
	Stamp   Stamp     // linked into every binary
	MTime   time.Time // the archive entries' time: the commit's (zero is 1970)
	Jobs    int       // builds at once; 0 is GOMAXPROCS
	// Build builds one binary; nil is Build. Tests replace it to check
	// the rest of a run without compiling.
	Build func(ctx context.Context, srcDir string, t Target, out string, s Stamp) error
}

// Artifact is what a run made for one target.
type Artifact struct {
	Target       Target
	Binary       string // path of the stripped binary
	Archive      string // path of its archive
	BinaryBytes  int64
	ArchiveBytes int64
}

// Run builds every target's binary and archive into o.OutDir and writes
// SHA256SUMS covering all of them. Artifacts come back in o.Targets' order.
func Run(ctx context.Context, o Options) ([]Artifact, error) {
	targets := o.Targets
	if targets == nil {
		targets = Targets()
	}
	if len(targets) == 0 {
		return nil, errors.New("no targets to build: name some, such as -targets amd64")
	}
	build := o.Build
	if build == nil {
		build = Build
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("make the output directory: %w", err)
	}

	arts := make([]Artifact, len(targets))
	errs := make([]error, len(targets))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			arts[i], errs[i] = one(ctx, o, build, t)
		})
	}
	wg.Wait()
	// Each error names its target already.
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	var names []string
	for _, a := range arts {
		names = append(names, filepath.Base(a.Binary), filepath.Base(a.Archive))
	}
	if err := WriteSums(o.OutDir, names); err != nil {
		return nil, err
	}
	return arts, nil
}

// one builds and archives one target.
func one(ctx context.Context, o Options, build func(context.Context, string, Target, string, Stamp) error, t Target) (Artifact, error) {
	if err := ctx.Err(); err != nil {
		return Artifact{}, fmt.Errorf("build %s: %w", t.BinaryName(), err)
	}
	a := Artifact{
		Target:  t,
		Binary:  filepath.Join(o.OutDir, t.BinaryName()),
		Archive: filepath.Join(o.OutDir, t.ArchiveName(o.Stamp.Version)),
	}
	if err := build(ctx, o.SrcDir, t, a.Binary, o.Stamp); err != nil {
		return Artifact{}, err
	}
	if err := WriteArchiveFile(a.Archive, ArchiveFiles(o.SrcDir, a.Binary), o.MTime); err != nil {
		return Artifact{}, err
	}
	var err error
	if a.BinaryBytes, err = fileSize(a.Binary); err != nil {
		return Artifact{}, err
	}
	if a.ArchiveBytes, err = fileSize(a.Archive); err != nil {
		return Artifact{}, err
	}
	return a, nil
}

func fileSize(name string) (int64, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// WriteSizes prints a table of each target's binary and archive sizes.
func WriteSizes(w io.Writer, arts []Artifact) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\t binary bytes\t   MiB\tarchive bytes\t   MiB\tarchive")
	for _, a := range arts {
		fmt.Fprintf(tw, "%s\t%13d\t%6.2f\t%13d\t%6.2f\t%s\n", a.Target.Name, a.BinaryBytes, mb(a.BinaryBytes),
			a.ArchiveBytes, mb(a.ArchiveBytes), filepath.Base(a.Archive))
	}
	return tw.Flush()
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
