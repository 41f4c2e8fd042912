package artifact

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// tarOverheadPerEntry is what the decompressed stream may hold per entry
// besides file contents: its header block, padding and a PAX record for a long
// name. With the file contents bounded by MaxUnpackedBytes, it bounds the
// whole decompressed stream, so that headers that archive/tar reads and drops
// (a chain of PAX records before one entry) cannot make a small download
// expand without end.
const (
	tarOverheadPerEntry = 8 << 10
	tarOverheadSlack    = 64 << 10
)

// maxEntryNameBytes bounds an entry's name. Repositories have far shorter
// paths; without a bound, one entry 100,000 folders deep takes seconds to
// create and cannot be removed with os.RemoveAll.
const maxEntryNameBytes = 1024

// untar unpacks the gzip-compressed tar stream r into dir, an existing empty
// folder. It refuses (with ErrInvalidArtifact) absolute names, ".."
// components, names over maxEntryNameBytes, hard links, devices and FIFOs,
// an entry given twice, an entry below a file or symlink, a symlink that
// resolves outside dir, and an archive over limits.MaxFiles entries, or
// making over limits.MaxFiles files, folders and symlinks (the folders its
// paths imply included), or over limits.MaxUnpackedBytes of contents; the size is checked from each header
// before anything of the entry is written.
//
// Symlinks are created last, once every target is known, so that no entry is
// ever written through one; dir is also opened as an os.Root, which refuses
// any path that would leave it, as a second line of defence.
func untar(ctx context.Context, r io.Reader, dir string, limits Limits) error {
	unzipped, err := gzip.NewReader(r)
	if err != nil {
		return invalidf("not a gzip stream: %v", err)
	}
	defer func() { _ = unzipped.Close() }()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("opening the unpack folder: %w", err)
	}
	defer func() { _ = root.Close() }()

	streamBound := limits.MaxUnpackedBytes + int64(limits.MaxFiles)*tarOverheadPerEntry + tarOverheadSlack
	archive := tar.NewReader(&boundedReader{r: unzipped, remaining: streamBound})
	u := &unpacker{root: root, limits: limits, kinds: map[string]byte{}, symlinks: map[string]string{}}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		header, err := archive.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return tarballError(err)
		}
		if err := u.extract(archive, header); err != nil {
			return err
		}
	}
	return u.finish()
}

// tarballError reports a failure to read the tarball: the stream is
// corrupt or over the bound, either way the artifact's fault.
func tarballError(err error) error {
	if errors.Is(err, ErrInvalidArtifact) {
		return err
	}
	return invalidf("corrupt tarball: %v", err)
}

// unpacker holds what untar has seen so far.
type unpacker struct {
	root          *os.Root
	limits        Limits
	entries       int
	unpackedBytes int64
	// kinds maps each entry name seen (cleaned), and each of its parent
	// folders, to its tar type flag.
	kinds map[string]byte
	// symlinks maps each symlink name to its target; they are created by finish.
	symlinks map[string]string
}

// extract unpacks one entry.
func (u *unpacker) extract(archive *tar.Reader, header *tar.Header) error {
	if header.Typeflag == tar.TypeXGlobalHeader {
		// Metadata for the whole archive (git archive writes the commit id).
		return nil
	}
	u.entries++
	if u.entries > u.limits.MaxFiles {
		return invalidf("the tarball has more than %d entries", u.limits.MaxFiles)
	}
	name, err := entryName(header.Name)
	if err != nil {
		return err
	}
	if name == "." {
		if header.Typeflag == tar.TypeDir {
			return nil
		}
		return invalidf("tar entry %q has no name", header.Name)
	}
	if err := u.register(name, header.Typeflag); err != nil {
		return err
	}

	switch header.Typeflag {
	case tar.TypeDir:
		return u.localError(u.root.MkdirAll(name, 0o755))
	case tar.TypeReg:
		return u.writeFile(name, header, archive)
	case tar.TypeSymlink:
		u.symlinks[name] = header.Linkname
		return nil
	case tar.TypeLink:
		return invalidf("tar entry %q is a hard link, which is not allowed", name)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return invalidf("tar entry %q is a device file or FIFO, which is not allowed", name)
	default:
		return invalidf("tar entry %q has unsupported type %q", name, header.Typeflag)
	}
}

// register records the entry name and its parent folders, refusing a name
// given twice (except for a folder) and a name below anything but a folder.
// With these checks on names, a later failure of the file system is the
// file system's, not the artifact's.
func (u *unpacker) register(name string, kind byte) error {
	if previous, seen := u.kinds[name]; seen && (previous != tar.TypeDir || kind != tar.TypeDir) {
		return invalidf("tar entry %q appears twice", name)
	}
	for parent := path.Dir(name); parent != "."; parent = path.Dir(parent) {
		parentKind, seen := u.kinds[parent]
		if !seen {
			u.kinds[parent] = tar.TypeDir
			continue
		}
		if parentKind != tar.TypeDir {
			return invalidf("tar entry %q lies below %q, which is not a folder", name, parent)
		}
	}
	u.kinds[name] = kind
	// Every name in kinds is a file, folder or symlink the unpacking makes: one entry of a
	// long path implies hundreds of folders, which the bound on entries alone would not see.
	if len(u.kinds) > u.limits.MaxFiles {
		return invalidf("the tarball makes more than %d files and folders (counting the folders its paths imply)", u.limits.MaxFiles)
	}
	return nil
}

// writeFile writes a regular file after checking its declared size against
// the bound, so that a tar bomb fails before its contents are written.
func (u *unpacker) writeFile(name string, header *tar.Header, contents io.Reader) error {
	u.unpackedBytes += header.Size
	if u.unpackedBytes > u.limits.MaxUnpackedBytes {
		return invalidf("the unpacked files exceed %d bytes (at tar entry %q)", u.limits.MaxUnpackedBytes, name)
	}
	if err := u.root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return u.localError(err)
	}
	// Keep only the executable bit of the archived mode: no setuid, no
	// files that the operator itself cannot read or remove.
	perm := fs.FileMode(0o644)
	if header.Mode&0o111 != 0 {
		perm = 0o755
	}
	file, err := u.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return u.localError(err)
	}
	_, copyErr := io.Copy(file, contents)
	closeErr := file.Close()
	var pathErr *fs.PathError
	switch {
	case copyErr != nil && errors.As(copyErr, &pathErr):
		return u.localError(copyErr)
	case copyErr != nil:
		return tarballError(copyErr)
	}
	return u.localError(closeErr)
}

// localError tags an error of the local file system; those are not the
// artifact's fault (a full disk), so they stay transient.
func (u *unpacker) localError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("unpacking the artifact: %w", err)
}

// finish creates the symlinks, in name order, once it has checked that each
// target stays inside the folder.
func (u *unpacker) finish() error {
	names := make([]string, 0, len(u.symlinks))
	for name := range u.symlinks {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		target := u.symlinks[name]
		if err := u.checkSymlinkTarget(name, target); err != nil {
			return err
		}
		if err := u.root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return u.localError(err)
		}
		if err := u.root.Symlink(target, name); err != nil {
			return u.localError(err)
		}
	}
	return nil
}

// checkSymlinkTarget resolves target from the folder of the symlink name, one
// component at a time as the kernel does, and refuses it when it leaves the
// unpack folder or passes through another symlink of the archive (whose own
// ".." would be resolved from somewhere else). Both are checked on names
// only: the unpack folder holds nothing but the archive's entries.
func (u *unpacker) checkSymlinkTarget(name, target string) error {
	if target == "" || path.IsAbs(target) || filepath.IsAbs(target) {
		return invalidf("symlink %q points to %q, outside the artifact", name, target)
	}
	var resolved []string
	if parent := path.Dir(name); parent != "." {
		resolved = strings.Split(parent, "/")
	}
	parts := strings.Split(target, "/")
	for i, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			if len(resolved) == 0 {
				return invalidf("symlink %q points to %q, outside the artifact", name, target)
			}
			resolved = resolved[:len(resolved)-1]
			continue
		}
		resolved = append(resolved, part)
		if _, isLink := u.symlinks[strings.Join(resolved, "/")]; isLink && i < len(parts)-1 {
			return invalidf("symlink %q points to %q, through another symlink", name, target)
		}
	}
	return nil
}

// entryName checks a tar entry name and returns it cleaned ("." for the
// archive root).
func entryName(raw string) (string, error) {
	if raw == "" {
		return "", invalidf("a tar entry has an empty name")
	}
	if len(raw) > maxEntryNameBytes {
		return "", invalidf("tar entry %q... has a name longer than %d bytes", raw[:64], maxEntryNameBytes)
	}
	if path.IsAbs(raw) || filepath.IsAbs(raw) {
		return "", invalidf("tar entry %q has an absolute path", raw)
	}
	if slices.Contains(strings.Split(raw, "/"), "..") {
		return "", invalidf("tar entry %q contains \"..\"", raw)
	}
	name := path.Clean(raw)
	if name != "." && !filepath.IsLocal(filepath.FromSlash(name)) {
		return "", invalidf("tar entry %q is not a local path", raw)
	}
	return name, nil
}

// boundedReader fails with ErrInvalidArtifact once more than remaining bytes
// have been read.
type boundedReader struct {
	r         io.Reader
	remaining int64
}

// Read reads from the underlying reader within the bound.
func (b *boundedReader) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		return 0, invalidf("the decompressed tarball is larger than its bound")
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.r.Read(p)
	b.remaining -= int64(n)
	return n, err
}
