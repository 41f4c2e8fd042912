package osmpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Contents is what a package tarball holds.
type Contents struct {
	// Name is the tarball's top-level folder.
	Name       string
	Descriptor Descriptor
	// DescriptorPath is relative to the package folder.
	DescriptorPath string
	// Files lists every file and link, relative to the package folder, sorted.
	Files []string
}

// maxTarStreamBytes bounds the uncompressed tar stream: the file contents
// plus generous room for headers, so a gzip bomb stops early.
const maxTarStreamBytes = MaxPackageBytes + MaxPackageEntries*4096

// errStreamTooLarge reports a tar stream longer than maxTarStreamBytes.
var errStreamTooLarge = errors.New("the uncompressed tarball is too large")

// Inspect checks a package tarball the way the NBI does on upload, and more
// strictly: a valid gzip-compressed tar; exactly one top-level folder holding
// every entry; no absolute path, no "..", no link pointing out of the folder,
// no device or pipe; exactly one descriptor directly in the folder; every
// MD5 in checksums.txt, when there is one, matching; valid helm charts; the
// size limits. Errors are *Error values.
func Inspect(tarball []byte) (*Contents, error) {
	result, problem := inspect(tarball)
	if problem != nil {
		return nil, problem
	}
	return result, nil
}

func inspect(tarball []byte) (*Contents, *Error) {
	unzipped, err := gzip.NewReader(bytes.NewReader(tarball))
	if err != nil {
		return nil, &Error{Message: fmt.Sprintf("not a gzip file: %v", err)}
	}
	archive := tar.NewReader(&boundedReader{reader: unzipped, remaining: maxTarStreamBytes})
	var archived *contents
	for {
		header, err := archive.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return nil, tarError(archived, err)
		}
		if header.Typeflag == tar.TypeXGlobalHeader {
			// Metadata for the whole archive (git archive writes one), not a file.
			continue
		}
		pkg, rel, problem := splitEntryName(archived, header.Name)
		if problem != nil {
			return nil, problem
		}
		if archived == nil {
			archived = newContents(pkg)
		}
		if rel == "" {
			if header.Typeflag != tar.TypeDir {
				return nil, errorf(pkg, "%s is a file at the top of the tarball: everything must be inside the package folder", header.Name)
			}
			continue
		}
		e, problem := readTarEntry(archived, archive, header, rel)
		if problem != nil {
			return nil, problem
		}
		if problem := archived.add(e); problem != nil {
			return nil, problem
		}
	}
	if archived == nil {
		return nil, &Error{Message: "the tarball is empty"}
	}
	if problem := archived.verifyChecksums(); problem != nil {
		return nil, problem
	}
	descriptor, descriptorPath, problem := archived.descriptor()
	if problem != nil {
		return nil, problem
	}
	return &Contents{Name: archived.pkg, Descriptor: *descriptor, DescriptorPath: descriptorPath, Files: archived.sortedPaths()}, nil
}

func tarError(archived *contents, err error) *Error {
	pkg := ""
	if archived != nil {
		pkg = archived.pkg
	}
	if errors.Is(err, errStreamTooLarge) {
		return tooLarge(pkg)
	}
	return errorf(pkg, "not a valid tar.gz: %v", err)
}

// splitEntryName checks a tar entry name and splits it into the top-level
// folder and the path below it ("" for the folder itself). archived is nil
// until the first entry has named the folder.
func splitEntryName(archived *contents, name string) (string, string, *Error) {
	pkg := ""
	if archived != nil {
		pkg = archived.pkg
	}
	clean := strings.TrimSuffix(name, "/")
	if problem := checkArchivePath(pkg, name, clean); problem != nil {
		return "", "", problem
	}
	top, rel, _ := strings.Cut(clean, "/")
	if pkg != "" && top != pkg {
		return "", "", errorf(pkg, "more than one top-level folder (%s and %s): a package has exactly one", pkg, top)
	}
	return top, rel, nil
}

// checkArchivePath refuses absolute paths, ".." and paths that are not in
// their simplest form (such as "./x" or "a//b"), which the NBI could store
// somewhere other than where this check assumes.
func checkArchivePath(pkg, name, clean string) *Error {
	switch {
	case strings.HasPrefix(name, "/"):
		return errorf(pkg, "%s is an absolute path: absolute paths are not allowed in a package", name)
	case clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(clean, "/../") || strings.HasSuffix(clean, "/.."):
		return errorf(pkg, "%s contains '..': '..' is not allowed in a package", name)
	case clean == "" || path.Clean(clean) != clean || strings.Contains(clean, "\\"):
		return errorf(pkg, "%q is not a plain relative path", name)
	}
	return nil
}

// readTarEntry reads one entry below the package folder.
func readTarEntry(archived *contents, archive *tar.Reader, header *tar.Header, rel string) (*entry, *Error) {
	switch header.Typeflag {
	case tar.TypeDir:
		return &entry{path: rel, dir: true}, nil
	case tar.TypeReg:
		if header.Size > archived.remainingBytes() {
			return nil, tooLarge(archived.pkg)
		}
		content, err := io.ReadAll(archive)
		if err != nil {
			return nil, tarError(archived, err)
		}
		return &entry{path: rel, content: content, executable: header.Mode&0o111 != 0}, nil
	case tar.TypeSymlink:
		if strings.HasPrefix(header.Linkname, "/") {
			return nil, fileErrorf(archived.pkg, rel, "is a link to an absolute path (%s): links must stay inside the package folder", header.Linkname)
		}
		return linkEntry(archived, rel, path.Join(archived.pkg, path.Dir(rel), header.Linkname), header.Linkname)
	case tar.TypeLink:
		// A hard link names its target by its path in the archive.
		if problem := checkArchivePath(archived.pkg, header.Linkname, header.Linkname); problem != nil {
			return nil, problem
		}
		return linkEntry(archived, rel, header.Linkname, header.Linkname)
	default:
		return nil, fileErrorf(archived.pkg, rel, "has tar type %q: only files, folders and links can be in a package", header.Typeflag)
	}
}

// linkEntry makes the entry of a link whose target, as an archive path, is
// target; it must be inside the package folder.
func linkEntry(archived *contents, rel, target, linkname string) (*entry, *Error) {
	inside, underPackage := strings.CutPrefix(path.Clean(target), archived.pkg+"/")
	if !underPackage {
		return nil, fileErrorf(archived.pkg, rel, "is a link that points out of the package folder (%s)", linkname)
	}
	return &entry{path: rel, link: inside}, nil
}

// boundedReader fails once more than remaining bytes are read; unlike
// io.LimitReader, which just ends, it makes the reader report the real cause.
type boundedReader struct {
	reader    io.Reader
	remaining int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		return 0, errStreamTooLarge
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.reader.Read(p)
	b.remaining -= int64(n)
	return n, err
}
