package osmpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// archiveEntry is an entry of a tarball made by a test.
type archiveEntry struct {
	header  tar.Header
	content string
	// zeros is how many zero bytes follow content, for large files.
	zeros int64
}

func fileEntry(name, content string) archiveEntry {
	return archiveEntry{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(content))}, content, 0}
}

func folderEntry(name string) archiveEntry {
	return archiveEntry{header: tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755}}
}

func linkEntryOf(typeflag byte, name, target string) archiveEntry {
	return archiveEntry{header: tar.Header{Name: name, Typeflag: typeflag, Linkname: target, Mode: 0o777}}
}

func specialEntry(typeflag byte, name string) archiveEntry {
	return archiveEntry{header: tar.Header{Name: name, Typeflag: typeflag, Mode: 0o644}}
}

// makeTarball writes entries as a .tar.gz, whatever they hold.
func makeTarball(t *testing.T, entries ...archiveEntry) []byte {
	t.Helper()
	var buffer bytes.Buffer
	zipper := gzip.NewWriter(&buffer)
	archive := tar.NewWriter(zipper)
	for _, e := range entries {
		mustSucceed(t, archive.WriteHeader(&e.header))
		_, err := io.Copy(archive, io.MultiReader(strings.NewReader(e.content), io.LimitReader(zeros{}, e.zeros)))
		mustSucceed(t, err)
	}
	mustSucceed(t, archive.Close())
	mustSucceed(t, zipper.Close())
	return buffer.Bytes()
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buffer bytes.Buffer
	zipper := gzip.NewWriter(&buffer)
	_, err := zipper.Write(data)
	mustSucceed(t, err)
	mustSucceed(t, zipper.Close())
	return buffer.Bytes()
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestInspectAcceptsLinksInside(t *testing.T) {
	checksums := md5Of(knfDescriptor) + "\tpkg/d.yaml\n" + md5Of(knfDescriptor) + "  pkg/sub/soft\n" + md5Of(knfDescriptor) + "\tpkg/hard\n"
	tarball := makeTarball(t,
		folderEntry("pkg/"),
		fileEntry("pkg/d.yaml", knfDescriptor),
		fileEntry("pkg/checksums.txt", checksums),
		folderEntry("pkg/sub/"),
		linkEntryOf(tar.TypeSymlink, "pkg/sub/soft", "../d.yaml"),
		linkEntryOf(tar.TypeLink, "pkg/hard", "pkg/d.yaml"),
	)
	contents, err := Inspect(tarball)
	mustSucceed(t, err)
	want := &Contents{Name: "pkg", DescriptorPath: "d.yaml", Files: []string{"checksums.txt", "d.yaml", "hard", "sub/soft"},
		Descriptor: Descriptor{Kind: KindVNF, ID: "demo_knf", Name: "demo", IDLine: 2, KDUs: []KDU{{Name: "k", HelmChart: "stable/k"}}}}
	if diff := cmp.Diff(want, contents); diff != "" {
		t.Errorf("Inspect (-want +got):\n%s", diff)
	}
}

func TestInspectRejects(t *testing.T) {
	descriptor := descriptorEntry()
	manyFiles := []archiveEntry{descriptor}
	for i := range MaxPackageEntries {
		manyFiles = append(manyFiles, fileEntry("pkg/f"+strconv.Itoa(i), ""))
	}
	tests := []struct {
		name        string
		tarball     func(t *testing.T) []byte
		wantMessage string
	}{
		{"not gzip", func(*testing.T) []byte { return []byte("PK\x03\x04 a zip") }, "not a gzip file"},
		{"gzip of something else", func(t *testing.T) []byte { return gzipped(t, []byte(strings.Repeat("not a tar ", 100))) }, "not a valid tar.gz"},
		{"truncated", func(t *testing.T) []byte {
			whole := makeTarball(t, descriptor)
			return whole[:len(whole)/2]
		}, "not a valid tar.gz"},
		{"empty", func(t *testing.T) []byte { return makeTarball(t) }, "the tarball is empty"},
		{"absolute path", func(t *testing.T) []byte { return makeTarball(t, descriptor, fileEntry("/etc/passwd", "x")) },
			"/etc/passwd is an absolute path"},
		{"dot-dot", func(t *testing.T) []byte { return makeTarball(t, descriptor, fileEntry("pkg/../../x", "x")) },
			"contains '..'"},
		{"dot-dot first", func(t *testing.T) []byte { return makeTarball(t, fileEntry("../x", "x")) }, "contains '..'"},
		{"not a plain path", func(t *testing.T) []byte { return makeTarball(t, fileEntry("./pkg/d.yaml", knfDescriptor)) },
			"is not a plain relative path"},
		{"two top-level folders", func(t *testing.T) []byte { return makeTarball(t, descriptor, fileEntry("other/x", "x")) },
			"more than one top-level folder (pkg and other)"},
		{"file at the top", func(t *testing.T) []byte { return makeTarball(t, fileEntry("pkg", "x")) },
			"is a file at the top of the tarball"},
		{"symlink out", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, linkEntryOf(tar.TypeSymlink, "pkg/a/l", "../../../etc/passwd"))
		}, "link that points out of the package folder"},
		{"symlink to the parent", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, linkEntryOf(tar.TypeSymlink, "pkg/l", ".."))
		}, "link that points out of the package folder"},
		{"absolute symlink", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, linkEntryOf(tar.TypeSymlink, "pkg/l", "/etc/passwd"))
		}, "link to an absolute path"},
		{"hard link out", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, linkEntryOf(tar.TypeLink, "pkg/l", "other/x"))
		}, "link that points out of the package folder"},
		{"hard link with dot-dot", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, linkEntryOf(tar.TypeLink, "pkg/l", "pkg/../../x"))
		}, "contains '..'"},
		{"character device", func(t *testing.T) []byte { return makeTarball(t, descriptor, specialEntry(tar.TypeChar, "pkg/tty")) },
			"has tar type '3'"},
		{"named pipe", func(t *testing.T) []byte { return makeTarball(t, descriptor, specialEntry(tar.TypeFifo, "pkg/fifo")) },
			"has tar type '6'"},
		{"duplicate entry", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, fileEntry("pkg/d.yaml", "vnfd: {id: x}\n"))
		},
			"file d.yaml: appears twice"},
		{"checksum mismatch", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, fileEntry("pkg/checksums.txt", md5Of("other")+"\tpkg/d.yaml\n"))
		}, "file checksums.txt, line 1: MD5 mismatch for d.yaml"},
		{"checksum of a missing file", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, fileEntry("pkg/checksums.txt", md5Of(knfDescriptor)+"\tpkg/d.yaml\n"+md5Of("")+"\tpkg/gone\n"))
		}, "line 2: lists gone, which is not in the package"},
		{"checksum line without a path", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, fileEntry("pkg/checksums.txt", md5Of("x")+"\n"))
		}, "line 1: not an"},
		{"checksum path outside the package", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, fileEntry("pkg/checksums.txt", md5Of("x")+"\tother/d.yaml\n"))
		}, "other/d.yaml is not under pkg/"},
		{"checksum of a link cycle", func(t *testing.T) []byte {
			return makeTarball(t, descriptor, linkEntryOf(tar.TypeSymlink, "pkg/a", "b"), linkEntryOf(tar.TypeSymlink, "pkg/b", "a"),
				fileEntry("pkg/checksums.txt", md5Of("x")+"\tpkg/a\n"))
		}, "too many levels of links"},
		{"no descriptor", func(t *testing.T) []byte { return makeTarball(t, fileEntry("pkg/sub/d.yaml", knfDescriptor)) },
			"no descriptor"},
		{"two descriptor files", func(t *testing.T) []byte { return makeTarball(t, descriptor, fileEntry("pkg/values.yml", "a: 1\n")) },
			"more than one .yaml, .yml or .json file directly in the package folder (d.yaml, values.yml)"},
		{"invalid helm chart", func(t *testing.T) []byte {
			return makeTarball(t, fileEntry("pkg/d.yaml", strings.Replace(knfDescriptor, "stable/k", "stable/k:2", 1)))
		}, "package pkg, file d.yaml, line 5: vnfd.kdu[0].helm-chart: helm-chart 'stable/k:2' is not valid"},
		{"too large", func(t *testing.T) []byte {
			big := archiveEntry{header: tar.Header{Name: "pkg/big", Typeflag: tar.TypeReg, Mode: 0o644, Size: MaxPackageBytes}, zeros: MaxPackageBytes}
			return makeTarball(t, descriptor, big)
		}, "larger than 64 MiB in total"},
		{"too many entries", func(t *testing.T) []byte { return makeTarball(t, manyFiles...) }, "more than 10000 files and folders"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			contents, err := Inspect(test.tarball(t))
			var problem *Error
			if !errors.As(err, &problem) {
				t.Fatalf("want an *Error, got %v (contents %+v)", err, contents)
			}
			if !strings.Contains(problem.Error(), test.wantMessage) {
				t.Errorf("got %q, want it to contain %q", problem.Error(), test.wantMessage)
			}
		})
	}
}

func TestInspectStopsAGzipBomb(t *testing.T) {
	// Entries with large PAX records (metadata, not file content) expand a
	// small .tar.gz beyond the bound on the uncompressed stream.
	comment := strings.Repeat("x", 900<<10)
	entries := []archiveEntry{descriptorEntry()}
	for i := 0; int64(i)*int64(len(comment)) <= maxTarStreamBytes; i++ {
		entry := fileEntry("pkg/f"+strconv.Itoa(i), "")
		entry.header.PAXRecords = map[string]string{"comment": comment}
		entries = append(entries, entry)
	}
	tarball := makeTarball(t, entries...)
	if len(tarball) > 2<<20 {
		t.Fatalf("the test's tarball is %d bytes, not a bomb", len(tarball))
	}
	_, err := Inspect(tarball)
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("got %v, want a refusal for size", err)
	}
}

func descriptorEntry() archiveEntry {
	return fileEntry("pkg/d.yaml", knfDescriptor)
}
