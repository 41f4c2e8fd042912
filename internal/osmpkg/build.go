package osmpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Package is a package ready to upload to OSM.
type Package struct {
	// Name is the source folder's name, which is the tarball's top-level folder.
	Name       string
	Descriptor Descriptor
	// DescriptorPath is relative to the package folder, e.g. "openldap_vnfd.yaml".
	DescriptorPath string
	// Tarball is the .tar.gz OSM expects.
	Tarball []byte
	// MD5 is the hex MD5 of Tarball, for the Content-File-MD5 header.
	MD5 string
	// Digest is "sha256:<hex>" of Tarball: since Build is deterministic, it
	// changes exactly when the package's content does.
	Digest string
}

// Build makes the package from a source folder; the package name is the
// folder's name. A checksums.txt directly in the folder is replaced by a
// generated one. Errors are *Error values.
func Build(dir string) (*Package, error) {
	pkg, err := build(dir)
	if err != nil {
		return nil, err
	}
	return pkg, nil
}

func build(dir string) (*Package, *Error) {
	absolute, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Message: fmt.Sprintf("package folder %s: %v", dir, err)}
	}
	name := filepath.Base(absolute)
	if problem := validatePackageName(name); problem != nil {
		return nil, problem
	}
	source, problem := readSource(name, absolute)
	if problem != nil {
		return nil, problem
	}
	descriptor, descriptorPath, problem := source.descriptor()
	if problem != nil {
		return nil, problem
	}
	checksums, problem := source.checksums()
	if problem != nil {
		return nil, problem
	}
	if problem := source.add(&entry{path: checksumsName, content: checksums}); problem != nil {
		return nil, problem
	}
	tarball, err := writeTarball(source)
	if err != nil {
		return nil, errorf(name, "cannot make the tarball: %v", err)
	}
	digest := sha256.Sum256(tarball)
	return &Package{
		Name:           name,
		Descriptor:     *descriptor,
		DescriptorPath: descriptorPath,
		Tarball:        tarball,
		MD5:            md5Hex(tarball),
		Digest:         "sha256:" + hex.EncodeToString(digest[:]),
	}, nil
}

// validatePackageName refuses names that cannot be a tarball's top-level
// folder or go into the NBI's Content-Filename header.
func validatePackageName(name string) *Error {
	if name == "." || name == ".." || name == string(filepath.Separator) || strings.ContainsFunc(name, unicode.IsControl) {
		return &Error{Message: fmt.Sprintf("%q is not a usable package folder name", name)}
	}
	return nil
}

// readSource reads every file and folder under root. A symlink is stored as
// the file it points to, provided that file is inside the package folder.
func readSource(name, root string) (*contents, *Error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, errorf(name, "cannot read the package folder: %v", err)
	}
	if info, err := os.Stat(realRoot); err != nil || !info.IsDir() {
		return nil, errorf(name, "%s is not a folder", root)
	}
	source := newContents(name)
	walkErr := filepath.WalkDir(realRoot, func(path string, d fs.DirEntry, err error) error {
		if path == realRoot && err == nil {
			return nil
		}
		rel, relErr := filepath.Rel(realRoot, path)
		if relErr != nil {
			return errorf(name, "cannot read %s: %v", path, relErr)
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			return fileErrorf(name, rel, "cannot read: %v", err)
		}
		if rel == checksumsName {
			// Replaced by the generated one.
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		e, readErr := readSourceEntry(source, realRoot, path, rel, d)
		if readErr != nil {
			return readErr
		}
		if addErr := source.add(e); addErr != nil {
			return addErr
		}
		return nil
	})
	if walkErr != nil {
		if packageError, ok := errors.AsType[*Error](walkErr); ok {
			return nil, packageError
		}
		return nil, errorf(name, "cannot read the package folder: %v", walkErr)
	}
	return source, nil
}

// readSourceEntry reads one folder, file or symlink of a package source.
func readSourceEntry(source *contents, root, path, rel string, d fs.DirEntry) (*entry, *Error) {
	switch {
	case d.IsDir():
		return &entry{path: rel, dir: true}, nil
	case d.Type().IsRegular():
		return readSourceFile(source, path, rel)
	case d.Type()&fs.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fileErrorf(source.pkg, rel, "is a broken symlink")
		}
		if inside, err := filepath.Rel(root, target); err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
			return nil, fileErrorf(source.pkg, rel, "is a symlink that leaves the package folder")
		}
		info, err := os.Stat(target)
		if err != nil {
			return nil, fileErrorf(source.pkg, rel, "cannot read: %v", err)
		}
		if info.IsDir() {
			return nil, fileErrorf(source.pkg, rel, "is a symlink to a folder: only symlinks to files are supported")
		}
		if !info.Mode().IsRegular() {
			return nil, fileErrorf(source.pkg, rel, "is a symlink to a device, socket or pipe: only files can be in a package")
		}
		return readSourceFile(source, target, rel)
	default:
		return nil, fileErrorf(source.pkg, rel, "is a device, socket or pipe: only files, folders and symlinks to files can be in a package")
	}
}

// readSourceFile reads a file, stopping as soon as it would not fit in the
// package's size limit.
func readSourceFile(source *contents, path, rel string) (*entry, *Error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fileErrorf(source.pkg, rel, "cannot read: %v", err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fileErrorf(source.pkg, rel, "cannot read: %v", err)
	}
	content, err := io.ReadAll(io.LimitReader(file, source.remainingBytes()+1))
	if err != nil {
		return nil, fileErrorf(source.pkg, rel, "cannot read: %v", err)
	}
	if int64(len(content)) > source.remainingBytes() {
		return nil, tooLarge(source.pkg)
	}
	return &entry{path: rel, content: content, executable: info.Mode()&0o111 != 0}, nil
}

// fixedModTime is the modification time of every tarball entry, so that
// tarballs do not depend on when files were checked out. 1980-01-01 is old
// enough to be clearly synthetic and, unlike 1970-01-01, draws no
// "implausibly old time stamp" warning from GNU tar.
var fixedModTime = time.Date(1980, time.January, 1, 0, 0, 0, 0, time.UTC)

// writeTarball writes the deterministic .tar.gz of a package: entries under
// NAME/ in sorted order, folders included, fixed modes, owner, time and
// gzip header. The bytes depend only on the files and on the Go release's
// compress/flate, which the operator's binary fixes.
func writeTarball(source *contents) ([]byte, error) {
	paths := make([]string, 0, len(source.entries))
	for path := range source.entries {
		paths = append(paths, path)
	}
	slices.Sort(paths)

	var buffer bytes.Buffer
	zipper, err := gzip.NewWriterLevel(&buffer, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	archive := tar.NewWriter(zipper)
	if err := archive.WriteHeader(tarHeader(source.pkg+"/", &entry{dir: true})); err != nil {
		return nil, err
	}
	for _, path := range paths {
		e := source.entries[path]
		name := source.pkg + "/" + path
		if e.dir {
			name += "/"
		}
		if err := archive.WriteHeader(tarHeader(name, e)); err != nil {
			return nil, err
		}
		if _, err := archive.Write(e.content); err != nil {
			return nil, err
		}
	}
	if err := archive.Close(); err != nil {
		return nil, err
	}
	if err := zipper.Close(); err != nil {
		return nil, err
	}
	return buffer.Bytes(), nil
}

// tarHeader is the header of an entry; uid, gid, user and group names are
// left empty (0) so that the tarball does not depend on who built it.
func tarHeader(name string, e *entry) *tar.Header {
	header := &tar.Header{Name: name, ModTime: fixedModTime, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.content))}
	if e.dir || e.executable {
		header.Mode = 0o755
	}
	if e.dir {
		header.Typeflag = tar.TypeDir
	}
	return header
}
