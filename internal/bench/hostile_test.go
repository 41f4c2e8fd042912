package bench

import (
	"errors"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/osmops/osmops/internal/artifact"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/testing/artifactserver"
	"github.com/osmops/osmops/internal/testing/openldap"
)

func hostilePackages(t *testing.T) map[string]string {
	t.Helper()
	packages, err := openldap.PackageFiles(openldap.PackageNames...)
	if err != nil {
		t.Fatal(err)
	}
	return packages
}

// The substitution attack's files are refused, each with a problem naming it.
func TestSubstitutionAttackIsRefusedFileByFile(t *testing.T) {
	files := substitutionFiles()
	for name, content := range files {
		if !strings.HasPrefix(name, "deploy/small") && len(content) < 1<<20 {
			t.Errorf("%s is %d bytes, not 1 MiB", name, len(content))
		}
	}
	_, err := parseRevision(files, gitops.Options{Substitution: &gitops.Substitution{
		Vars: map[string]string{"v": strings.Repeat("x", gitops.MaxVariableBytes)},
	}})
	if err == nil {
		t.Fatal("the revision was accepted")
	}
	for name := range files {
		if !strings.Contains(err.Error(), path.Base(name)) {
			t.Errorf("no problem names %s: %v", name, err)
		}
	}
}

// The tiny-keys revision is at the parsed revision's bound: accepted, and refused with a small
// file more.
func TestTinyKeysRevisionIsAtTheParsedBound(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 64 MiB of YAML twice")
	}
	files := tinyKeysFiles(hostilePackages(t))
	for name, content := range files {
		if strings.HasSuffix(name, ".osmops.yaml") && len(content) > 1<<20 {
			t.Errorf("%s is %d bytes, more than a file may be", name, len(content))
		}
	}
	if _, err := ParseRevision(files); err != nil {
		t.Fatalf("the revision at its bound was refused: %v", err)
	}
	files["deploy/more.osmops.yaml"] = tinyKeysFile("more", 64<<10)
	if _, err := ParseRevision(files); err == nil || !strings.Contains(err.Error(), "the deployment files up to this one are larger than the limit of 67108864 bytes once parsed") {
		t.Errorf("a 64 KiB file more: %v, want a problem of the revision's parsed size", err)
	}
}

// The folder bomb has exactly the bound's entries, counting the folders its paths imply: it is
// unpacked, and refused with one file more (not with -short).
func TestFolderBombIsAtTheEntriesBound(t *testing.T) {
	files := folderBombFiles()
	entries := map[string]bool{}
	for name := range files {
		for p := name; p != "."; p = path.Dir(p) {
			entries[p] = true
		}
	}
	if len(entries) != artifact.DefaultMaxFiles {
		t.Errorf("%d entries, want %d", len(entries), artifact.DefaultMaxFiles)
	}
	if testing.Short() {
		t.Skip("unpacks 20,000 entries twice")
	}
	server := artifactserver.NewServer()
	defer server.Close()
	fetch := func(files map[string]string) error {
		published := server.PublishFiles("bomb", files)
		return artifact.Fetch(t.Context(), http.DefaultClient, published.URL, published.Digest, t.TempDir(), artifact.Limits{})
	}
	if err := fetch(files); err != nil {
		t.Fatalf("the folder bomb at the bound: %v", err)
	}
	files["more"] = ""
	if err := fetch(files); !errors.Is(err, artifact.ErrInvalidArtifact) {
		t.Errorf("one file more: %v, want an invalid artifact", err)
	}
}

// The status attack declares the most NS instances, all with the longest names, and is valid.
func TestLongNamesRevisionIsAtTheStatusBound(t *testing.T) {
	revision, err := ParseRevision(longNameFiles(hostilePackages(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(revision.NsInstances) != gitops.MaxNsInstances {
		t.Errorf("%d NS instances, want %d", len(revision.NsInstances), gitops.MaxNsInstances)
	}
	for _, ns := range revision.NsInstances {
		if len(ns.Name) != longNameLength {
			t.Fatalf("%s is %d characters, want %d", ns.Name, len(ns.Name), longNameLength)
		}
	}
}

// The hostile tenants' targets compare the peak RSS with the documented limit and need the
// victim Ready; the report shows their section only when they ran.
func TestHostileTargetsAndSection(t *testing.T) {
	r := &Report{}
	var md strings.Builder
	if err := Render(&md, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Hostile tenants") {
		t.Error("the section of hostile tenants shows though they did not run")
	}
	r.Hostile = &HostileResult{MemoryLimit: DocumentedMemoryLimit, VictimReady: time.Second,
		Usage: Usage{PeakRSS: DocumentedMemoryLimit - 1}, Tenants: []HostileTenant{{Name: "a/b", Attack: "x", Outcome: "Ready=True"}}}
	if got := hostileVerdicts(r.Hostile); !got[0].Pass || !got[1].Pass {
		t.Errorf("under the limit, victim Ready: %+v", got)
	}
	r.Hostile.Usage.PeakRSS, r.Hostile.VictimReady = DocumentedMemoryLimit, 0
	if got := hostileVerdicts(r.Hostile); got[0].Pass || got[1].Pass {
		t.Errorf("at the limit, victim not Ready: %+v", got)
	}
	md.Reset()
	if err := Render(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Hostile tenants at the documented bounds") || !strings.Contains(md.String(), "| a/b | x | Ready=True |") {
		t.Errorf("the section of hostile tenants is missing:\n%s", md.String())
	}
}
