package cli

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// git runs git in dir as a test's committer and returns what it prints.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=osmops", "-c", "user.email=osmops@example.com"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// The values a diff may show as running are those the applied commit's deployment file
// declares in Git, read from the checkout's history.
func TestAppliedGitValuesAreReadFromTheAppliedCommit(t *testing.T) {
	const file = "deploy/ldap.osmops.yaml"
	dir := writeRepo(t, map[string]string{file: openldap.NsInstanceFile("ldap", simVIM, "2")})
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "two replicas")
	applied := git(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{file: openldap.NsInstanceFile("ldap", simVIM, "5")})
	git(t, dir, "commit", "-q", "-am", "five replicas")
	rev, err := gitops.Load(dir, gitops.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	got := appliedGitValues(ctx, dir, "main@sha1:"+applied, rev.NsInstances)
	if want := `{"replicaCount":"2"}`; got["ldap"]["openldap/ldap"] != want {
		t.Errorf("values of the applied commit = %v, want openldap/ldap %s", got, want)
	}
	for _, revision := range []string{"main@sha1:" + strings.Repeat("0", 40), "latest@sha256:" + strings.Repeat("a", 64), "main", ""} {
		if got := appliedGitValues(ctx, dir, revision, rev.NsInstances); len(got) > 0 {
			t.Errorf("values of %q, which the history does not hold = %v, want none", revision, got)
		}
	}
}

// What git writes of a file is held up to the bound of a deployment file, and no further.
func TestBoundedBufferRefusesPastItsLimit(t *testing.T) {
	out := &boundedBuffer{limit: 4}
	if _, err := out.Write([]byte("kind")); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write([]byte(":")); err == nil || out.String() != "kind" {
		t.Errorf("past the limit: %v, holding %q", err, out.String())
	}
}
