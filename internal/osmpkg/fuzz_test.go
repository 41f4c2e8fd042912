package osmpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzInspect checks that no tarball, however malformed, makes Inspect panic; that it refuses
// with an *Error that says why; and that what it accepts is a package of one folder whose
// files all lie inside it, the descriptor among them, and reads the same every time.
func FuzzInspect(f *testing.F) {
	for _, source := range []string{"testdata/openldap_knf", "testdata/openldap_ns"} {
		built, err := Build(source)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(built.Tarball)
	}
	f.Add(packed(f, folderEntry("pkg/"), descriptorEntry(), linkEntryOf(tar.TypeSymlink, "pkg/l", "d.yaml")))
	f.Add(packed(f, descriptorEntry(), fileEntry("pkg/checksums.txt", md5Of(knfDescriptor)+"\tpkg/d.yaml\n")))
	f.Add(packed(f, descriptorEntry(), linkEntryOf(tar.TypeLink, "pkg/h", "pkg/../../etc/passwd")))
	f.Add(packed(f, fileEntry("../pkg/d.yaml", knfDescriptor)))
	f.Add(packed(f, descriptorEntry(), specialEntry(tar.TypeFifo, "pkg/fifo")))
	f.Add([]byte("not a tarball"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, tarball []byte) {
		contents, err := Inspect(tarball)
		if err != nil {
			var refusal *Error
			if !errors.As(err, &refusal) || refusal.Message == "" {
				t.Fatalf("Inspect refused with %#v, not an *Error with a message", err)
			}
			return
		}
		if contents.Name == "" || strings.ContainsAny(contents.Name, "/\\") || contents.Name == ".." {
			t.Fatalf("package folder %q", contents.Name)
		}
		if !slices.IsSorted(contents.Files) || len(slices.Compact(slices.Clone(contents.Files))) != len(contents.Files) {
			t.Fatalf("files %q are not sorted and unique", contents.Files)
		}
		for _, file := range contents.Files {
			if file == "" || path.IsAbs(file) || path.Clean(file) != file || strings.HasPrefix(file, "../") {
				t.Fatalf("file %q is not a plain path inside the package folder", file)
			}
		}
		if !slices.Contains(contents.Files, contents.DescriptorPath) {
			t.Fatalf("descriptor %q is not among the files %q", contents.DescriptorPath, contents.Files)
		}
		again, err := Inspect(tarball)
		if err != nil {
			t.Fatalf("a second Inspect refused what the first accepted: %v", err)
		}
		if diff := cmp.Diff(contents, again); diff != "" {
			t.Fatalf("a second Inspect read otherwise (-first +second):\n%s", diff)
		}
	})
}

// packed is makeTarball for the seeds of a fuzz target, which has a *testing.F to fail, not a
// *testing.T.
func packed(f *testing.F, entries ...archiveEntry) []byte {
	var buffer bytes.Buffer
	zipper := gzip.NewWriter(&buffer)
	archive := tar.NewWriter(zipper)
	for _, e := range entries {
		if err := archive.WriteHeader(&e.header); err != nil {
			f.Fatal(err)
		}
		if _, err := archive.Write([]byte(e.content)); err != nil {
			f.Fatal(err)
		}
	}
	if err := errors.Join(archive.Close(), zipper.Close()); err != nil {
		f.Fatal(err)
	}
	return buffer.Bytes()
}
