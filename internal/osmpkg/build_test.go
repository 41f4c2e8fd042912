package osmpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const knfDescriptor = "vnfd:\n  id: demo_knf\n  product-name: demo\n  kdu:\n    - name: k\n      helm-chart: stable/k\n"

// writeTree creates files (path -> content) under dir; a path ending in "/"
// makes a folder.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			mustSucceed(t, os.MkdirAll(path, 0o755))
			continue
		}
		mustSucceed(t, os.MkdirAll(filepath.Dir(path), 0o755))
		mustSucceed(t, os.WriteFile(path, []byte(content), 0o644))
	}
}

func mustSucceed(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tarEntry is what the tests compare of a tarball entry.
type tarEntry struct {
	Name     string
	Typeflag byte
	Mode     int64
	Content  string
}

// readTarball lists a tarball's entries, checking the fields that must be
// fixed for the tarball to be reproducible.
func readTarball(t *testing.T, tarball []byte) []tarEntry {
	t.Helper()
	unzipped, err := gzip.NewReader(bytes.NewReader(tarball))
	mustSucceed(t, err)
	if unzipped.Name != "" || !unzipped.ModTime.IsZero() {
		t.Errorf("gzip header has name %q and time %v, want neither", unzipped.Name, unzipped.ModTime)
	}
	var entries []tarEntry
	archive := tar.NewReader(unzipped)
	for {
		header, err := archive.Next()
		if err == io.EOF {
			return entries
		}
		mustSucceed(t, err)
		if header.Uid != 0 || header.Gid != 0 || header.Uname != "" || header.Gname != "" || !header.ModTime.Equal(fixedModTime) {
			t.Errorf("%s: uid %d gid %d user %q group %q time %v, want 0 0 \"\" \"\" %v",
				header.Name, header.Uid, header.Gid, header.Uname, header.Gname, header.ModTime, fixedModTime)
		}
		content, err := io.ReadAll(archive)
		mustSucceed(t, err)
		entries = append(entries, tarEntry{header.Name, header.Typeflag, header.Mode, string(content)})
	}
}

func md5Of(content string) string {
	sum := md5.Sum([]byte(content))
	return hex.EncodeToString(sum[:])
}

func TestBuildTestdataPackages(t *testing.T) {
	tests := []struct {
		folder         string
		descriptorPath string
		wantID         string
		wantKind       Kind
	}{
		{"openldap_knf", "openldap_vnfd.yaml", "openldap_knf", KindVNF},
		{"openldap_ns", "openldap_nsd.yaml", "openldap_ns", KindNS},
	}
	for _, test := range tests {
		t.Run(test.folder, func(t *testing.T) {
			pkg, err := Build(filepath.Join("testdata", test.folder))
			mustSucceed(t, err)
			descriptor := readTestdata(t, test.folder+"/"+test.descriptorPath)
			checksums := md5Of(descriptor) + "\t" + test.folder + "/" + test.descriptorPath + "\n"
			want := []tarEntry{
				{test.folder + "/", tar.TypeDir, 0o755, ""},
				{test.folder + "/checksums.txt", tar.TypeReg, 0o644, checksums},
				{test.folder + "/" + test.descriptorPath, tar.TypeReg, 0o644, descriptor},
			}
			if diff := cmp.Diff(want, readTarball(t, pkg.Tarball)); diff != "" {
				t.Errorf("tarball entries (-want +got):\n%s", diff)
			}
			sha := sha256.Sum256(pkg.Tarball)
			if pkg.Name != test.folder || pkg.DescriptorPath != test.descriptorPath || pkg.Descriptor.ID != test.wantID ||
				pkg.Descriptor.Kind != test.wantKind || pkg.MD5 != md5Of(string(pkg.Tarball)) ||
				pkg.Digest != "sha256:"+hex.EncodeToString(sha[:]) {
				t.Errorf("package fields: %+v", pkg)
			}
			contents, err := Inspect(pkg.Tarball)
			mustSucceed(t, err)
			wantContents := &Contents{Name: test.folder, Descriptor: pkg.Descriptor, DescriptorPath: test.descriptorPath,
				Files: []string{"checksums.txt", test.descriptorPath}}
			if diff := cmp.Diff(wantContents, contents); diff != "" {
				t.Errorf("Inspect (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildLayoutAndChecksums(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo_knf")
	writeTree(t, dir, map[string]string{
		"demo_vnfd.yaml":                knfDescriptor,
		"checksums.txt":                 "stale\n",
		"helm-values/values.yaml":       "replicaCount: 2\n",
		"helm-values/sub/checksums.txt": "not the top-level one\n",
		"scripts/run.sh":                "#!/bin/sh\n",
		"empty/":                        "",
		"a-b.txt":                       "sorts before a/",
	})
	mustSucceed(t, os.Chmod(filepath.Join(dir, "scripts/run.sh"), 0o700))
	mustSucceed(t, os.Symlink("../demo_vnfd.yaml", filepath.Join(dir, "scripts/link.yaml")))

	pkg, err := Build(dir)
	mustSucceed(t, err)
	checksums := strings.Join([]string{
		md5Of("sorts before a/") + "\tdemo_knf/a-b.txt",
		md5Of(knfDescriptor) + "\tdemo_knf/demo_vnfd.yaml",
		md5Of("not the top-level one\n") + "\tdemo_knf/helm-values/sub/checksums.txt",
		md5Of("replicaCount: 2\n") + "\tdemo_knf/helm-values/values.yaml",
		md5Of(knfDescriptor) + "\tdemo_knf/scripts/link.yaml",
		md5Of("#!/bin/sh\n") + "\tdemo_knf/scripts/run.sh",
	}, "\n") + "\n"
	want := []tarEntry{
		{"demo_knf/", tar.TypeDir, 0o755, ""},
		{"demo_knf/a-b.txt", tar.TypeReg, 0o644, "sorts before a/"},
		{"demo_knf/checksums.txt", tar.TypeReg, 0o644, checksums},
		{"demo_knf/demo_vnfd.yaml", tar.TypeReg, 0o644, knfDescriptor},
		{"demo_knf/empty/", tar.TypeDir, 0o755, ""},
		{"demo_knf/helm-values/", tar.TypeDir, 0o755, ""},
		{"demo_knf/helm-values/sub/", tar.TypeDir, 0o755, ""},
		{"demo_knf/helm-values/sub/checksums.txt", tar.TypeReg, 0o644, "not the top-level one\n"},
		{"demo_knf/helm-values/values.yaml", tar.TypeReg, 0o644, "replicaCount: 2\n"},
		{"demo_knf/scripts/", tar.TypeDir, 0o755, ""},
		{"demo_knf/scripts/link.yaml", tar.TypeReg, 0o644, knfDescriptor},
		{"demo_knf/scripts/run.sh", tar.TypeReg, 0o755, "#!/bin/sh\n"},
	}
	if diff := cmp.Diff(want, readTarball(t, pkg.Tarball)); diff != "" {
		t.Errorf("tarball entries (-want +got):\n%s", diff)
	}
	if pkg.Name != "demo_knf" || pkg.Descriptor.ID != "demo_knf" {
		t.Errorf("name %q, descriptor id %q", pkg.Name, pkg.Descriptor.ID)
	}
	if _, err := Inspect(pkg.Tarball); err != nil {
		t.Errorf("Inspect of a built package: %v", err)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	files := map[string]string{
		"demo_vnfd.yaml":          knfDescriptor,
		"helm-values/values.yaml": "replicaCount: 2\n",
		"scripts/run.sh":          "#!/bin/sh\n",
	}
	build := func(parent string, fileMode os.FileMode, modTime time.Time) []byte {
		dir := filepath.Join(parent, "demo_knf")
		writeTree(t, dir, files)
		for name := range files {
			path := filepath.Join(dir, filepath.FromSlash(name))
			mode := fileMode
			if strings.HasSuffix(name, ".sh") {
				mode |= 0o100
			}
			mustSucceed(t, os.Chmod(path, mode))
			mustSucceed(t, os.Chtimes(path, modTime, modTime))
		}
		pkg, err := Build(dir)
		mustSucceed(t, err)
		return pkg.Tarball
	}
	first := build(t.TempDir(), 0o644, time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC))
	second := build(filepath.Join(t.TempDir(), "elsewhere", "deeper"), 0o600, time.Now())
	if !bytes.Equal(first, second) {
		t.Error("two copies of the same files in different folders gave different tarballs")
	}
}

func TestBuildTwiceGivesTheSameBytes(t *testing.T) {
	first, err := Build("testdata/openldap_knf")
	mustSucceed(t, err)
	second, err := Build("testdata/openldap_knf")
	mustSucceed(t, err)
	if !bytes.Equal(first.Tarball, second.Tarball) || first.Digest != second.Digest {
		t.Error("building the same folder twice gave different tarballs")
	}
}

func TestBuildAllowsFolderNameOtherThanID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "other_name")
	writeTree(t, dir, map[string]string{"d.yaml": knfDescriptor})
	pkg, err := Build(dir)
	mustSucceed(t, err)
	if pkg.Name != "other_name" || pkg.Descriptor.ID != "demo_knf" {
		t.Errorf("name %q, id %q", pkg.Name, pkg.Descriptor.ID)
	}
}

func TestBuildRejects(t *testing.T) {
	tests := []struct {
		name        string
		files       map[string]string
		setUp       func(t *testing.T, dir string)
		wantFile    string
		wantLine    int
		wantMessage string
	}{
		{name: "no descriptor", files: map[string]string{"values/v.yaml": "a: 1\n", "README.md": "x"},
			wantMessage: "no descriptor"},
		{name: "two descriptors", files: map[string]string{"a.yaml": knfDescriptor, "b.yml": "nsd:\n  id: n\n"},
			wantMessage: "more than one descriptor: a.yaml, b.yml"},
		{name: "another YAML file beside the descriptor", files: map[string]string{"a.yaml": knfDescriptor, "values.json": "{}"},
			wantMessage: "more than one .yaml, .yml or .json file directly in the package folder (a.yaml, values.json)"},
		{name: "a YAML file that is not a descriptor", files: map[string]string{"values.yaml": "a: 1\n"},
			wantFile: "values.yaml", wantLine: 1, wantMessage: "no top-level vnfd or nsd key"},
		{name: "descriptor without id", files: map[string]string{"d.yaml": "vnfd:\n  product-name: x\n"},
			wantFile: "d.yaml", wantLine: 2, wantMessage: "vnfd.id is missing"},
		{name: "descriptor with a YAML error", files: map[string]string{"d.yaml": "vnfd:\n  id: [\n"},
			wantFile: "d.yaml", wantLine: 2, wantMessage: "invalid YAML"},
		{name: "invalid helm chart", files: map[string]string{"d.yaml": strings.Replace(knfDescriptor, "stable/k", "stable/k:1.0", 1)},
			wantFile: "d.yaml", wantLine: 5, wantMessage: "helm-chart 'stable/k:1.0' is not valid"},
		{name: "symlink out of the folder", files: map[string]string{"d.yaml": knfDescriptor},
			setUp: func(t *testing.T, dir string) {
				writeTree(t, filepath.Dir(dir), map[string]string{"secret": "s"})
				mustSucceed(t, os.Symlink("../secret", filepath.Join(dir, "leak")))
			},
			wantFile: "leak", wantMessage: "symlink that leaves the package folder"},
		{name: "absolute symlink", files: map[string]string{"d.yaml": knfDescriptor},
			setUp: func(t *testing.T, dir string) {
				mustSucceed(t, os.Symlink("/etc/hostname", filepath.Join(dir, "host")))
			},
			wantFile: "host", wantMessage: "symlink that leaves the package folder"},
		{name: "broken symlink", files: map[string]string{"d.yaml": knfDescriptor},
			setUp:    func(t *testing.T, dir string) { mustSucceed(t, os.Symlink("missing", filepath.Join(dir, "dangling"))) },
			wantFile: "dangling", wantMessage: "broken symlink"},
		{name: "symlink to a folder", files: map[string]string{"d.yaml": knfDescriptor, "sub/x": "x"},
			setUp:    func(t *testing.T, dir string) { mustSucceed(t, os.Symlink("sub", filepath.Join(dir, "alias"))) },
			wantFile: "alias", wantMessage: "symlink to a folder"},
		{name: "named pipe", files: map[string]string{"d.yaml": knfDescriptor},
			setUp:    func(t *testing.T, dir string) { mustSucceed(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644)) },
			wantFile: "pipe", wantMessage: "device, socket or pipe"},
		{name: "too many files", files: map[string]string{"d.yaml": knfDescriptor},
			setUp: func(t *testing.T, dir string) {
				for i := range MaxPackageEntries {
					mustSucceed(t, os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o644))
				}
			},
			wantMessage: "more than 10000 files and folders"},
		{name: "too large", files: map[string]string{"d.yaml": knfDescriptor},
			setUp: func(t *testing.T, dir string) {
				// A sparse file: large to read, cheap to make.
				mustSucceed(t, os.WriteFile(filepath.Join(dir, "big"), nil, 0o644))
				mustSucceed(t, os.Truncate(filepath.Join(dir, "big"), MaxPackageBytes+1))
			},
			wantMessage: "larger than 64 MiB in total"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "pkg")
			mustSucceed(t, os.MkdirAll(dir, 0o755))
			writeTree(t, dir, test.files)
			if test.setUp != nil {
				test.setUp(t, dir)
			}
			pkg, err := Build(dir)
			var problem *Error
			if !errors.As(err, &problem) {
				t.Fatalf("want an *Error, got %v (package %+v)", err, pkg)
			}
			if problem.Package != "pkg" || problem.File != test.wantFile || problem.Line != test.wantLine ||
				!strings.Contains(problem.Message, test.wantMessage) {
				t.Errorf("got %#v, want file %q line %d and a message containing %q", problem, test.wantFile, test.wantLine, test.wantMessage)
			}
		})
	}
}

func TestBuildRejectsAMissingFolder(t *testing.T) {
	if _, err := Build(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Build of a missing folder succeeded")
	}
}
