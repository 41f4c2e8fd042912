package osmpkg

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// checksumsName is the file, directly in the package folder, that lists the
// MD5 of every other file (the OSM client's convention).
const checksumsName = "checksums.txt"

// maxLinkHops bounds how many links Inspect follows to reach a file, so that
// a link cycle cannot loop forever (the same bound as Linux's ELOOP).
const maxLinkHops = 40

// entry is one file, folder or link of a package.
type entry struct {
	// path is slash-separated and relative to the package folder.
	path       string
	dir        bool
	executable bool
	content    []byte
	// link is, for a link read from a tarball, the path of its target
	// relative to the package folder; Build stores links as files.
	link string
}

// contents indexes a package's entries by path.
type contents struct {
	pkg     string
	entries map[string]*entry
	// bytes is the total size of the file contents.
	bytes int64
}

func newContents(pkg string) *contents {
	return &contents{pkg: pkg, entries: map[string]*entry{}}
}

// add records e, refusing a second entry with the same path.
func (c *contents) add(e *entry) *Error {
	if _, duplicate := c.entries[e.path]; duplicate {
		return fileErrorf(c.pkg, e.path, "appears twice in the package")
	}
	if len(c.entries) >= MaxPackageEntries {
		return errorf(c.pkg, "more than %d files and folders: a package may hold at most that many", MaxPackageEntries)
	}
	if int64(len(e.content)) > c.remainingBytes() {
		return tooLarge(c.pkg)
	}
	c.bytes += int64(len(e.content))
	c.entries[e.path] = e
	return nil
}

// remainingBytes is how much more file content the package may hold; readers
// use it to stop reading a file that would not fit anyway.
func (c *contents) remainingBytes() int64 {
	return MaxPackageBytes - c.bytes
}

func tooLarge(pkg string) *Error {
	return errorf(pkg, "larger than %d MiB in total: a package may hold at most that much", MaxPackageBytes>>20)
}

// sortedPaths lists the paths of the entries that are not folders, sorted.
func (c *contents) sortedPaths() []string {
	var paths []string
	for path, e := range c.entries {
		if !e.dir {
			paths = append(paths, path)
		}
	}
	slices.Sort(paths)
	return paths
}

// content returns the bytes of the file at path, following links.
func (c *contents) content(path string) ([]byte, *Error) {
	e := c.entries[path]
	for hops := 0; e != nil && e.link != ""; hops++ {
		if hops == maxLinkHops {
			return nil, fileErrorf(c.pkg, path, "too many levels of links")
		}
		e = c.entries[e.link]
	}
	if e == nil || e.dir {
		return nil, fileErrorf(c.pkg, path, "is a link to something that is not a file in the package")
	}
	return e.content, nil
}

// descriptor finds the package's descriptor the way the NBI does: every
// file directly in the package folder whose name ends in .yaml, .yml or .json
// (case-sensitively) is taken for the descriptor, so there must be exactly one.
func (c *contents) descriptor() (*Descriptor, string, *Error) {
	var candidates []string
	for _, path := range c.sortedPaths() {
		if !strings.Contains(path, "/") && hasDescriptorExtension(path) {
			candidates = append(candidates, path)
		}
	}
	switch len(candidates) {
	case 0:
		return nil, "", errorf(c.pkg, "no descriptor: the package folder must hold a .yaml, .yml or .json file whose top-level key is vnfd or nsd")
	case 1:
		return c.parseDescriptor(candidates[0])
	}
	var descriptors []string
	for _, path := range candidates {
		if data, err := c.content(path); err == nil && isDescriptor(data) {
			descriptors = append(descriptors, path)
		}
	}
	if len(descriptors) > 1 {
		return nil, "", errorf(c.pkg, "more than one descriptor: %s", strings.Join(descriptors, ", "))
	}
	return nil, "", errorf(c.pkg, "more than one .yaml, .yml or .json file directly in the package folder (%s): "+
		"OSM takes each of them for the descriptor, so keep only the descriptor there and move the others into a subfolder",
		strings.Join(candidates, ", "))
}

func (c *contents) parseDescriptor(path string) (*Descriptor, string, *Error) {
	data, err := c.content(path)
	if err != nil {
		return nil, "", err
	}
	descriptor, err := parseDescriptor(data)
	if err != nil {
		err.Package, err.File = c.pkg, path
		return nil, "", err
	}
	return descriptor, path, nil
}

func hasDescriptorExtension(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".json")
}

// checksums renders checksums.txt: one "<md5 hex>\t<pkg>/<path>" line per
// file, sorted by path, without checksums.txt itself.
func (c *contents) checksums() ([]byte, *Error) {
	var lines strings.Builder
	for _, path := range c.sortedPaths() {
		if path == checksumsName {
			continue
		}
		data, err := c.content(path)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&lines, "%s\t%s/%s\n", md5Hex(data), c.pkg, path)
	}
	return []byte(lines.String()), nil
}

// checksumsLine is a line of checksums.txt; besides the OSM client's tab it
// takes the blanks that md5sum writes.
var checksumsLine = regexp.MustCompile(`^([0-9a-fA-F]{32})[ \t]+\*?(.+)$`)

// verifyChecksums checks, when the package has a checksums.txt, that every
// file it lists is in the package with that MD5. The listing may be as large as the package,
// so it is read a line at a time, and each file hashed once however often it is listed.
func (c *contents) verifyChecksums() *Error {
	listing, found := c.entries[checksumsName]
	if !found {
		return nil
	}
	data, err := c.content(listing.path)
	if err != nil {
		return err
	}
	sums := map[string]string{}
	number := 0
	for text := range bytes.Lines(data) {
		number++
		text = bytes.TrimSuffix(bytes.TrimSuffix(text, []byte("\n")), []byte("\r"))
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		lineError := func(format string, args ...any) *Error {
			return &Error{Package: c.pkg, File: checksumsName, Line: number, Message: fmt.Sprintf(format, args...)}
		}
		match := checksumsLine.FindSubmatch(text)
		if match == nil {
			return lineError("not an \"<md5 hex>\\t<path>\" line")
		}
		listed := string(match[2])
		path, underPackage := strings.CutPrefix(listed, c.pkg+"/")
		if !underPackage {
			return lineError("%s is not under %s/", listed, c.pkg)
		}
		if _, exists := c.entries[path]; !exists {
			return lineError("lists %s, which is not in the package", path)
		}
		actual, hashed := sums[path]
		if !hashed {
			content, err := c.content(path)
			if err != nil {
				return err
			}
			actual = md5Hex(content)
			sums[path] = actual
		}
		if expected := string(match[1]); !strings.EqualFold(actual, expected) {
			return lineError("MD5 mismatch for %s: listed %s, actual %s", path, expected, actual)
		}
	}
	return nil
}

func md5Hex(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}
