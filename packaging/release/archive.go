package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ArchiveName is the release file name of the target's archive, such as
// cabinet-1.2.3-linux-arm64.tar.gz.
func (t Target) ArchiveName(version string) string {
	return "cabinet-" + version + "-linux-" + t.Name + ".tar.gz"
}

// ArchiveFile is one entry of a release archive.
type ArchiveFile struct {
	Name string // name in the archive, such as "cabinet"
	Mode int64  // permission bits, such as 0o755
	Src  string // the file on disk to copy
}

// ArchiveFiles are what a target's archive holds: the binary and the two
// documents a cabinet owner needs beside it, the README and the documented
// settings (batocera.conf.d/cabinet.conf).
func ArchiveFiles(srcDir, binary string) []ArchiveFile {
	return []ArchiveFile{
		{Name: "cabinet", Mode: 0o755, Src: binary},
		{Name: "README.md", Mode: 0o644, Src: filepath.Join(srcDir, "README.md")},
		{Name: "cabinet.conf", Mode: 0o644, Src: filepath.Join(srcDir, "batocera.conf.d", "cabinet.conf")},
	}
}

// WriteArchive writes files as a gzipped tar to w. The bytes depend only on
// the files' names, modes and contents and on mtime: entries are sorted,
// owned by 0:0 with no user or group names, stamped with mtime (to the
// second), and the gzip header carries no name or time. Rebuilding a commit
// therefore gives the same archive, and its checksum means something.
func WriteArchive(w io.Writer, files []ArchiveFile, mtime time.Time) error {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b ArchiveFile) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(files); i++ {
		if files[i].Name == files[i-1].Name {
			return fmt.Errorf("archive: %q is listed twice", files[i].Name)
		}
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		if err := addFile(tw, f, mtime.Truncate(time.Second)); err != nil {
			return fmt.Errorf("archive %s: %w", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return nil
}

// addFile copies one file into tw with fixed metadata.
func addFile(tw *tar.Writer, f ArchiveFile, mtime time.Time) error {
	in, err := os.Open(f.Src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", f.Src)
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     f.Name,
		Mode:     f.Mode,
		Size:     fi.Size(),
		ModTime:  mtime,
		// USTAR has no access or change times and no PAX records that
		// could vary between runs.
		Format: tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, in)
	if err != nil {
		return err
	}
	if n != fi.Size() {
		return fmt.Errorf("%s changed while it was archived", f.Src)
	}
	return nil
}

// WriteArchiveFile writes the archive of files to name, replacing it only
// once it is complete.
func WriteArchiveFile(name string, files []ArchiveFile, mtime time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".archive-*")
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	bw := bufio.NewWriter(tmp)
	err = WriteArchive(bw, files, mtime)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(name), err)
	}
	return nil
}
