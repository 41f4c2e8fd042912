package devstack

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// startTestGitServer serves an empty folder of repositories on a free port.
func startTestGitServer(t *testing.T) *GitServer {
	t.Helper()
	execPath, err := gitExecPath()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	g, err := startGitServer(filepath.Join(dir, "git"), filepath.Join(dir, "clones"), 0,
		filepath.Join(execPath, "git-http-backend"), filepath.Join(dir, "git-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.close(); err != nil {
			t.Error(err)
		}
	})
	return g
}

// cloneTree clones url afresh and returns its files, as readTree does.
func cloneTree(t *testing.T, url string) map[string]string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	if _, err := git("", "clone", "--quiet", "--branch", DefaultBranch, url, dir); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	files, err := readTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func remoteHead(t *testing.T, url string) string {
	t.Helper()
	out, err := git("", "ls-remote", url, "refs/heads/"+DefaultBranch)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(out)[0]
}

func TestRepoCommitRemoveRevertOverHTTP(t *testing.T) {
	g := startTestGitServer(t)
	repo, err := g.CreateRepo("demo")
	if err != nil {
		t.Fatal(err)
	}
	var changed string
	steps := []struct {
		name    string
		change  func() (string, error)
		wantTip map[string]string
	}{
		{
			name: "commit",
			change: func() (string, error) {
				return repo.Commit(map[string]string{"a.yaml": "one", "dir/b.yaml": "two"}, "first")
			},
			wantTip: map[string]string{"a.yaml": "one", "dir/b.yaml": "two"},
		},
		{
			name: "commit a change",
			change: func() (sha string, err error) {
				changed, err = repo.Commit(map[string]string{"a.yaml": "changed"}, "second")
				return changed, err
			},
			wantTip: map[string]string{"a.yaml": "changed", "dir/b.yaml": "two"},
		},
		{
			name:    "remove a folder",
			change:  func() (string, error) { return repo.Remove("dir") },
			wantTip: map[string]string{"a.yaml": "changed"},
		},
		{
			name:    "revert the change",
			change:  func() (string, error) { return repo.Revert(changed) },
			wantTip: map[string]string{"a.yaml": "one"},
		},
	}
	for _, step := range steps {
		sha, err := step.change()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if head := remoteHead(t, repo.URL()); head != sha {
			t.Errorf("%s: the server's %s is %s, want the pushed %s", step.name, DefaultBranch, head, sha)
		}
		if diff := cmp.Diff(step.wantTip, cloneTree(t, repo.URL())); diff != "" {
			t.Errorf("%s: files (-want +got):\n%s", step.name, diff)
		}
	}
}

func TestCreateRepoRefuses(t *testing.T) {
	g := startTestGitServer(t)
	if _, err := g.CreateRepo("taken"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "a/b", `a\b`, ".hidden", "taken"} {
		if _, err := g.CreateRepo(name); err == nil {
			t.Errorf("CreateRepo(%q) succeeded, want an error", name)
		}
	}
}

func TestCommitRefusesPathsOutsideTheRepository(t *testing.T) {
	g := startTestGitServer(t)
	repo, err := g.CreateRepo("paths")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"../escape.yaml", "/etc/escape.yaml", ""} {
		_, err := repo.Commit(map[string]string{path: "x"}, "escape")
		if err == nil || !strings.Contains(err.Error(), "must be relative") {
			t.Errorf("Commit(%q): error %v, want a refusal", path, err)
		}
	}
}

func TestSeedCommitsAFolder(t *testing.T) {
	g := startTestGitServer(t)
	repo, err := g.CreateRepo("seeded")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	want := map[string]string{"deploy/x.osmops.yaml": "kind: NsInstance\n", "README.md": "hi\n"}
	for path, content := range want {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := repo.Seed(dir); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, cloneTree(t, repo.URL())); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if _, err := repo.Seed(t.TempDir()); err == nil {
		t.Error("seeding from an empty folder succeeded, want an error")
	}
	if _, err := repo.SeedAt(dir, "tenants/a"); err != nil {
		t.Fatal(err)
	}
	for path, content := range maps.Clone(want) {
		want["tenants/a/"+path] = content
	}
	if diff := cmp.Diff(want, cloneTree(t, repo.URL())); diff != "" {
		t.Errorf("files after SeedAt (-want +got):\n%s", diff)
	}
}
