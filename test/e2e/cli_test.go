//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// cliEnv names a built osmops command line tool to use instead of building one.
const cliEnv = "OSMOPS_E2E_CLI"

var _ = Describe("The osmops command-line tool", func() {
	// The osmops binary against the stack: it validates and diffs a checkout of the tenant's
	// repository as the operator would plan it, sending OSM no change, lists the OsmDeployment,
	// suspends and resumes it, and reconciles it with its source until the change is applied.
	It("validates, diffs, lists, suspends, resumes and reconciles a tenant's repository", func() {
		t := GinkgoTB()
		ctx, tenant, g := bootstrap(t)
		osmops, err := binary(cliEnv, t.TempDir(), "osmops", "./cmd/osmops")
		g.Expect(err).NotTo(HaveOccurred())
		kube := []string{"--kubeconfig", stack.Kubeconfig(), "-n", tenant.Namespace}
		cli := func(wantExit int, args ...string) string {
			t.Helper()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, osmops, args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if exit, ok := errors.AsType[*exec.ExitError](err); ok {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatalf("osmops %v: %v", args, err)
			}
			if code != wantExit {
				t.Fatalf("osmops %v: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantExit, stdout.String(), stderr.String())
			}
			return stdout.String()
		}

		// A checkout with one value changed.
		checkout := t.TempDir()
		files := firstGenerationDemo(t)
		files[ldapFile] = ldapInstance(ldapInstanceName, "2")
		for name, content := range files {
			path := filepath.Join(checkout, filepath.FromSlash(name))
			g.Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
			g.Expect(os.WriteFile(path, []byte(content), 0o644)).To(Succeed())
		}
		g.Expect(cli(0, "validate", checkout)).To(ContainSubstring("is valid: 1 NS instance, 2 packages"))

		before := tenant.stats(ctx, g)
		diff := cli(1, append([]string{"diff", checkout, "--deployment", tenant.Namespace + "/" + tenant.Repository}, kube...)...)
		g.Expect(diff).To(ContainSubstring("  ~ upgrade ldap: KDU ldap of VNF openldap: values changed in Git"))
		// A running value is never printed: nothing says whether it came from a Secret of an
		// earlier revision (docs/cli.md).
		g.Expect(diff).To(ContainSubstring(`        ~ replicaCount: (running value not shown) → "2"`))
		g.Expect(changes(tenant.stats(ctx, g))).To(Equal(changes(before)), "the diff sent OSM a change")

		listed := cli(0, append([]string{"get"}, kube...)...)
		g.Expect(listed).To(MatchRegexp(`(?m)^` + tenant.Repository + ` +main@[0-9a-f]+ +false +True +Applied revision`))
		g.Expect(listed).To(MatchRegexp(`(?m)^  ns/ldap +Ready`))

		g.Expect(cli(0, append([]string{"suspend", tenant.Repository}, kube...)...)).To(ContainSubstring("suspended"))
		deployment, err := tenant.deployment(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(deployment.Spec.Suspend).To(BeTrue())
		g.Expect(cli(0, append([]string{"resume", tenant.Repository}, kube...)...)).To(ContainSubstring("✔ Applied revision: " + revision(tenant.seeded)))

		// The change pushed: reconcile --with-source fetches it at once and waits until it is applied.
		sha, err := tenant.repo.Commit(map[string]string{ldapFile: files[ldapFile]}, t.Name())
		g.Expect(err).NotTo(HaveOccurred())
		reconciled := cli(0, append([]string{"reconcile", tenant.Repository, "--with-source"}, kube...)...)
		g.Expect(reconciled).To(ContainSubstring("✔ fetched revision " + revision(sha)))
		g.Expect(reconciled).To(ContainSubstring("✔ Applied revision: " + revision(sha)))
		g.Expect(kduParams(tenant.state(ctx, g), ldapInstanceName)).To(Equal(map[string]any{"replicaCount": "2"}))
		g.Expect(cli(0, append([]string{"diff", checkout, "--deployment", tenant.Namespace + "/" + tenant.Repository}, kube...)...)).
			To(ContainSubstring("✔ no change"))
		g.Expect(cli(0, append([]string{"events", tenant.Repository}, kube...)...)).To(ContainSubstring("OsmDeployment/" + tenant.Repository))
	})
})
