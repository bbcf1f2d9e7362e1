// Command release builds Cabinet's release files for CI: the static binary
// of every target stamped with the checkout's version, one archive per
// target, and SHA256SUMS; then it prints their sizes and what the largest
// parts of the amd64 binary are.
//
//	go run ./packaging/release/cmd/release -out DIR [-targets amd64,arm64]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging/release"
	"github.com/batocera-cabinet/cabinet/packaging/release/sizes"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	default:
		fmt.Fprintf(os.Stderr, "release: %s\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory for the binaries, archives and SHA256SUMS (required)")
	src := fs.String("src", ".", "the module's root (a git checkout)")
	list := fs.String("targets", "all", "comma-separated targets: amd64,arm64,armv7,armv6,riscv64")
	parts := fs.Int("parts", 12, "how many of the amd64 binary's largest packages to list; 0 skips the extra build")
	timeout := fs.Duration("timeout", 20*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("usage: release -out DIR [-targets amd64,arm64]")
	}
	targets, err := release.TargetsNamed(*list)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	stamp, err := release.StampFromGit(ctx, *src)
	if err != nil {
		return err
	}
	mtime, err := release.CommitTime(ctx, *src)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cabinet %s (commit %s), %d targets\n\n", stamp.Version, stamp.Commit, len(targets))
	arts, err := release.Run(ctx, release.Options{SrcDir: *src, OutDir: *out, Targets: targets, Stamp: stamp, MTime: mtime})
	if err != nil {
		return err
	}
	if err := release.WriteSizes(stdout, arts); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nchecksums: %s\n", release.SumsFile)
	if *parts <= 0 {
		return nil
	}
	amd64, _ := release.TargetsNamed("amd64")
	b, err := sizes.SizeBreakdown(ctx, *src, amd64[0], stamp)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nlargest parts of %s (measured on an unstripped build):\n", amd64[0].BinaryName())
	return sizes.WriteBreakdown(stdout, b, *parts)
}
