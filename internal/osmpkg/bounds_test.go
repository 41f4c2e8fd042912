package osmpkg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The bounds on what parsing a descriptor allocates, whatever it holds: well under the 120 MiB
// yaml.v3's node tree of a 1 MiB file of tiny items costs.
const (
	// maxHostileDescriptorAlloc bounds an alias bomb and a 10,000-level nesting.
	maxHostileDescriptorAlloc = 64 << 20
	// maxDescriptorAlloc bounds any descriptor within MaxDescriptorBytes (measured: 118 MiB for
	// 1 MiB of one-character list items).
	maxDescriptorAlloc = 160 << 20
)

// allocatedBy returns the bytes of heap f allocates. The tests that call it do not run in
// parallel, so that nothing else allocates meanwhile.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// descriptorOfSize is a VNF descriptor of exactly size bytes, shaped like a real one: a KDU,
// then as many SOL006 VDUs as fit, then a comment that fills the rest.
func descriptorOfSize(t *testing.T, size int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("vnfd:\n  id: big_knf\n  product-name: big\n  version: '1.0'\n  kdu:\n    - name: k\n      helm-chart: stable/k\n  vdu:\n")
	for i := 0; ; i++ {
		vdu := fmt.Sprintf(`    - id: vdu-%[1]d
      name: vdu-%[1]d
      int-cpd:
        - id: vdu-%[1]d-eth0
          virtual-network-interface-requirement:
            - name: eth0
              virtual-interface:
                type: PARAVIRT
      virtual-compute-desc: compute-%[1]d
      virtual-storage-desc:
        - storage-%[1]d
`, i)
		if b.Len()+len(vdu)+len("#\n") > size {
			break
		}
		b.WriteString(vdu)
	}
	b.WriteString("#" + strings.Repeat("x", size-b.Len()-2) + "\n")
	if b.Len() != size {
		t.Fatalf("the descriptor is %d bytes, not %d", b.Len(), size)
	}
	return b.String()
}

// buildDescriptor builds a package folder "pkg" holding only d.yaml with descriptor in it.
func buildDescriptor(t *testing.T, descriptor string) (*Package, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	mustSucceed(t, os.MkdirAll(dir, 0o755))
	mustSucceed(t, os.WriteFile(filepath.Join(dir, "d.yaml"), []byte(descriptor), 0o644))
	return Build(dir)
}

// wantDescriptorRefused checks that err is an *Error of package pkg, file d.yaml, at line
// (any line when line is -1), whose message contains message.
func wantDescriptorRefused(t *testing.T, err error, line int, message string) {
	t.Helper()
	problem, ok := errors.AsType[*Error](err)
	if !ok {
		t.Fatalf("want an *Error, got %v", err)
	}
	if problem.Package != "pkg" || problem.File != "d.yaml" || (line >= 0 && problem.Line != line) || !strings.Contains(problem.Message, message) {
		t.Errorf("got %q, want package pkg, file d.yaml, line %d and a message containing %q", problem.Error(), line, message)
	}
}

func TestDescriptorSizeBound(t *testing.T) {
	t.Run("a descriptor at the bound parses", func(t *testing.T) {
		var pkg *Package
		var err error
		allocated := allocatedBy(func() { pkg, err = buildDescriptor(t, descriptorOfSize(t, MaxDescriptorBytes)) })
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		if pkg.Descriptor.ID != "big_knf" || len(pkg.Descriptor.KDUs) != 1 || !pkg.Descriptor.HasVDUList {
			t.Errorf("descriptor %+v", pkg.Descriptor)
		}
		t.Logf("Build of a package with a %d-byte descriptor allocated %d MiB", MaxDescriptorBytes, allocated>>20)
	})
	t.Run("one byte over is refused, naming the file", func(t *testing.T) {
		_, err := buildDescriptor(t, descriptorOfSize(t, MaxDescriptorBytes+1))
		wantDescriptorRefused(t, err, 0, "larger than 1 MiB (1048576 bytes): a descriptor may be at most that large")
	})
	t.Run("Inspect refuses it too", func(t *testing.T) {
		_, err := Inspect(makeTarball(t, fileEntry("pkg/d.yaml", descriptorOfSize(t, MaxDescriptorBytes+1))))
		wantDescriptorRefused(t, err, 0, "larger than 1 MiB (1048576 bytes)")
	})
	t.Run("a file OSM would take for a second descriptor is not parsed past the bound", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "pkg")
		writeTree(t, dir, map[string]string{"a.yaml": knfDescriptor, "b.yaml": descriptorOfSize(t, MaxDescriptorBytes+1)})
		_, err := Build(dir)
		if err == nil || !strings.Contains(err.Error(), "more than one .yaml, .yml or .json file directly in the package folder (a.yaml, b.yaml)") {
			t.Errorf("got %v, want the two files named", err)
		}
	})
}

func TestDescriptorYAMLBounds(t *testing.T) {
	// A billion laughs: ten times ten times ... nine levels of aliases, 10^9 strings once
	// expanded, in under 1 KiB.
	var bomb strings.Builder
	bomb.WriteString("vnfd:\n  id: v\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&bomb, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	bomb.WriteString("  kdu: *l8\n")
	// vnf-profiles, which a descriptor keeps: 2,000 times 2,000 once expanded.
	profiles := "nsd:\n  id: n\n  p: &p {id: a, vnfd-id: b}\n  l: &l [" + strings.Repeat("*p, ", 1999) + "*p]\n" +
		"  d: &d {vnf-profile: *l}\n  df: [" + strings.Repeat("*d, ", 1999) + "*d]\n"
	nested := func(levels int) string {
		// The top-level map and vnfd's map are two levels; the lists are the others.
		return "vnfd:\n  id: v\n  deep: " + strings.Repeat("[", levels-2) + strings.Repeat("]", levels-2) + "\n"
	}
	// 1 MiB of one-character list items: the costliest node tree a descriptor may make.
	tiny := "vnfd:\n  id: v\n  l: [" + strings.Repeat("0,", (MaxDescriptorBytes-24)/2) + "0]\n"
	tests := []struct {
		name        string
		descriptor  string
		maxAlloc    uint64
		wantLine    int
		wantMessage string
	}{
		{"an alias bomb", bomb.String(), maxHostileDescriptorAlloc, 4, "YAML aliases (*l0) are not allowed in a descriptor"},
		{"an alias bomb of vnf-profiles", profiles, maxHostileDescriptorAlloc, 4, "YAML aliases (*p) are not allowed in a descriptor"},
		{"an alias of a scalar", "vnfd:\n  id: &i v\n  product-name: *i\n", maxHostileDescriptorAlloc, 3, "YAML aliases (*i) are not allowed"},
		{"a 10,000-level nesting", nested(10000), maxHostileDescriptorAlloc, 3, "the YAML is nested deeper than 64 levels: a descriptor may be at most that deep"},
		{"one level over the bound", nested(maxDescriptorDepth + 1), maxHostileDescriptorAlloc, 3, "nested deeper than 64 levels"},
		{"1 MiB of tiny items", tiny, maxDescriptorAlloc, 3, "from this line on the descriptor is larger than 8 MiB once parsed"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			var err error
			allocated := allocatedBy(func() { _, err = buildDescriptor(t, test.descriptor) })
			wantDescriptorRefused(t, err, test.wantLine, test.wantMessage)
			if allocated > test.maxAlloc {
				t.Errorf("refusing a %d-byte descriptor allocated %d MiB, more than %d MiB", len(test.descriptor), allocated>>20, test.maxAlloc>>20)
			}
			t.Logf("%d bytes, %d KiB allocated", len(test.descriptor), allocated>>10)
		})
	}
	t.Run("nesting at the bound parses", func(t *testing.T) {
		if _, err := buildDescriptor(t, nested(maxDescriptorDepth)); err != nil {
			t.Errorf("Build: %v", err)
		}
	})
	t.Run("an anchor without an alias parses", func(t *testing.T) {
		if _, err := buildDescriptor(t, "vnfd:\n  id: &i v\n"); err != nil {
			t.Errorf("Build: %v", err)
		}
	})
}

func TestChecksumsAreReadALineAtATime(t *testing.T) {
	// Old: strings.Split made a 16-byte string header for each of these 4 Mi lines (64 MiB).
	listing := strings.Repeat(md5Of(knfDescriptor)+"\tpkg/d.yaml\n", 1000) + strings.Repeat("\n", 4<<20)
	archived := newContents("pkg")
	mustSucceed(t, nilIfNoProblem(archived.add(&entry{path: "d.yaml", content: []byte(knfDescriptor)})))
	mustSucceed(t, nilIfNoProblem(archived.add(&entry{path: checksumsName, content: []byte(listing)})))
	var problem *Error
	allocated := allocatedBy(func() { problem = archived.verifyChecksums() })
	if problem != nil {
		t.Fatalf("verifyChecksums: %v", problem)
	}
	if allocated > 8<<20 {
		t.Errorf("checking a %d MiB checksums.txt allocated %d MiB", len(listing)>>20, allocated>>20)
	}

	mismatch := strings.Repeat(md5Of(knfDescriptor)+"\tpkg/d.yaml\n", 3) + md5Of("other") + "\tpkg/d.yaml\n"
	archived.entries[checksumsName].content = []byte(mismatch)
	if problem := archived.verifyChecksums(); problem == nil || problem.Line != 4 || !strings.Contains(problem.Message, "MD5 mismatch for d.yaml") {
		t.Errorf("got %v, want an MD5 mismatch at line 4", problem)
	}
}

// nilIfNoProblem turns a nil *Error into a nil error.
func nilIfNoProblem(problem *Error) error {
	if problem == nil {
		return nil
	}
	return problem
}
