package cli

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/pipeline"
	"github.com/osmops/osmops/internal/testing/artifactserver"
	"github.com/osmops/osmops/internal/testing/openldap"
	"github.com/osmops/osmops/internal/testing/osmtenant"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// startCluster starts an API server with osmops' CRDs and returns a client of it and the
// path of a kubeconfig of it.
func startCluster(t *testing.T) (client.Client, string) {
	t.Helper()
	env, err := testenv.NewEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	config, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "tester", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, path
}

// demoRepo is a copy of the demo repository, with files (slash path to content, "" to
// remove) changed.
func demoRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testenv.RepoRoot(), "hack", "demo-repo"))); err != nil {
		t.Fatal(err)
	}
	changeFiles(t, dir, files)
	return dir
}

// changeFiles writes files (slash path to content, "" to remove) in dir.
func changeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The diff plans as the operator would, from the cluster's OsmDeployment, and sends OSM no
// change: a create, a KDU upgrade whose value from a Secret is masked, a prune.
func TestDiffOfADeployment(t *testing.T) {
	ctx := context.Background()
	c, kubeconfig := startCluster(t)
	sim, url := startSimulator(t)
	sim.SetOperationDelay(0)
	const namespace, name, firstSecret, secondSecret = "telco", "gitops", "first-secret-value", "second-secret-value"
	deployment := osmtenant.Deployment(namespace, name, "osm-gitops")
	deployment.Spec.Prune = true
	valuesSecret := osmtenant.ValuesSecret(namespace, "ldap-admin", map[string]string{"password": firstSecret})
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		osmtenant.CredentialsSecret(namespace, nbisim.DefaultUsername, nbisim.DefaultPassword),
		osmtenant.Cluster(namespace, url), valuesSecret, deployment,
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	// OSM runs the demo repository as the operator applied it, and the status says so.
	applied := demoRepo(t, nil)
	identity, err := pipeline.ResolveOwnerIdentity(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	preview, err := pipeline.PreviewPlan(ctx, c, deployment, applied, identity, "osmops-system")
	if err != nil {
		t.Fatal(err)
	}
	nbi, err := osm.NewClient(url, osm.Credentials{Username: nbisim.DefaultUsername, Password: nbisim.DefaultPassword, Project: nbisim.DefaultProject})
	if err != nil {
		t.Fatal(err)
	}
	if result := engine.Apply(ctx, nbi, &preview.Plan, preview.Observed, 1); len(result.Errors) > 0 {
		t.Fatalf("applying the demo repository: %v", result.Errors)
	}
	if preview, err = pipeline.PreviewPlan(ctx, c, deployment, applied, identity, "osmops-system"); err != nil {
		t.Fatal(err)
	}
	deployment.Status.Inventory = pipeline.APIInventory(preview.Plan.Inventory)
	if err := c.Status().Update(ctx, deployment); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "diff", applied, "--deployment", namespace+"/"+name, "--kubeconfig", kubeconfig)
	if code != ExitOK || !strings.Contains(stdout, "✔ no change") {
		t.Fatalf("diff of what runs: exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, ExitOK, stdout, stderr)
	}

	// A new password, one value changed, one instance added, one removed.
	valuesSecret.StringData = map[string]string{"password": secondSecret}
	if err := c.Update(ctx, valuesSecret); err != nil {
		t.Fatal(err)
	}
	demoLDAP, err := os.ReadFile(filepath.Join(applied, "deploy", "ldap.osmops.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The checkout's history holds the commit applied, whose values from Git a diff shows as
	// the running ones.
	changed := demoRepo(t, nil)
	git(t, changed, "init", "-q", "-b", "main")
	git(t, changed, "add", ".")
	git(t, changed, "commit", "-q", "-m", "as applied")
	deployment.Status.LastAppliedRevision = "main@sha1:" + git(t, changed, "rev-parse", "HEAD")
	if err := c.Status().Update(ctx, deployment); err != nil {
		t.Fatal(err)
	}
	changeFiles(t, changed, map[string]string{
		"deploy/ldap.osmops.yaml":       strings.Replace(string(demoLDAP), `replicaCount: "1"`, `replicaCount: "2"`, 1),
		"deploy/ldap-stack.osmops.yaml": "",
		"deploy/ldap2.osmops.yaml":      openldap.NsInstanceFile("ldap2", simVIM, "3"),
	})
	git(t, changed, "add", "-A")
	git(t, changed, "commit", "-q", "-m", "the change")
	before := sim.Stats()
	code, stdout, stderr = run(t, "diff", changed, "--deployment", namespace+"/"+name, "--kubeconfig", kubeconfig)
	if code != ExitFindings {
		t.Fatalf("exit status %d, want %d; stdout:\n%s\nstderr:\n%s", code, ExitFindings, stdout, stderr)
	}
	if after := sim.Stats(); after.MutatingRequests != before.MutatingRequests {
		t.Errorf("the diff sent %d mutating requests", after.MutatingRequests-before.MutatingRequests)
	}
	header := " against OSM " + url + " (project admin), as OsmDeployment " + namespace + "/" + name
	want := lines(
		"Plan of "+changed+header,
		"",
		"NS instances to create:",
		"  + create ldap2 (NSD openldap_ns on VIM account "+simVIM+"): declared in Git",
		"      KDU ldap of VNF openldap:",
		`        + replicaCount: "3"`,
		"",
		"KDUs to upgrade:",
		"  ~ upgrade ldap: KDU ldap of VNF openldap: values changed in Git and Secret ldap-admin",
		"      KDU ldap of VNF openldap:",
		"        ~ adminPassword: (from a Secret: not shown)",
		`        ~ replicaCount: "1" → "2"`,
		"",
		"NS instances to delete (prune):",
		"  - delete ldap-stack: no longer declared in Git",
		"",
		"0 package uploads, 1 create, 1 upgrade, 0 package moves, 1 delete, 0 orphans",
	)
	if stdout != want {
		t.Errorf("output:\n%s\nwant:\n%s", stdout, want)
	}
	for _, secret := range []string{firstSecret, secondSecret} {
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("the output shows the Secret's value %q", secret)
		}
	}

	// Without a folder, the plan is that of the artifact the source holds now, fetched and
	// verified as the operator fetches it: the same plan, its header naming the revision.
	artifacts := artifactserver.NewServer()
	t.Cleanup(artifacts.Close)
	published := artifacts.PublishFiles(namespace+"/osm-gitops", filesOf(t, changed))
	if err := osmtenant.SetArtifact(ctx, c, sourcev1.GitRepositoryKind, namespace, "osm-gitops", published); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "diff", "--deployment", namespace+"/"+name, "--kubeconfig", kubeconfig)
	if code != ExitFindings {
		t.Fatalf("without a folder: exit status %d, want %d; stdout:\n%s\nstderr:\n%s", code, ExitFindings, stdout, stderr)
	}
	// An artifact has no history: the running value is not shown.
	fromSource := strings.NewReplacer("Plan of "+changed, "Plan of GitRepository "+namespace+"/osm-gitops at "+published.Revision,
		`~ replicaCount: "1" → "2"`, `~ replicaCount: (running value not shown) → "2"`).Replace(want)
	if stdout != fromSource {
		t.Errorf("without a folder, output:\n%s\nwant:\n%s", stdout, fromSource)
	}

	// On the same cluster: resume unsets spec.suspend in the patch that requests the reconcile.
	t.Run("resume's patch", func(t *testing.T) {
		suspended := osmtenant.Deployment(namespace, "suspended", "osm-gitops")
		suspended.Spec.Suspend = true
		if err := c.Create(ctx, suspended); err != nil {
			t.Fatal(err)
		}
		token, err := requestReconcile(ctx, c, suspended, func(obj *gitopsv1alpha1.OsmDeployment) { obj.Spec.Suspend = false })
		if err != nil {
			t.Fatal(err)
		}
		got := &gitopsv1alpha1.OsmDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(suspended), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.Suspend || got.Annotations[meta.ReconcileRequestAnnotation] != token {
			t.Errorf("suspend %v, request %q; want false and %q", got.Spec.Suspend, got.Annotations[meta.ReconcileRequestAnnotation], token)
		}
	})
}

// Without a cluster, --osm plans as a new OsmDeployment, which owns nothing: an instance OSM
// runs under the name is not taken without --adopt-existing.
func TestDiffAgainstOSM(t *testing.T) {
	t.Setenv(envUsername, nbisim.DefaultUsername)
	t.Setenv(envPassword, nbisim.DefaultPassword)
	sim, url := startSimulator(t)
	repo := ldapRepo(t, map[string]string{"deploy/ldap.osmops.yaml": openldap.NsInstanceFile("ldap", simVIM, "1")})
	code, stdout, stderr := run(t, "diff", repo, "--osm", url)
	if code != ExitFindings {
		t.Fatalf("exit status %d, want %d; stdout:\n%s\nstderr:\n%s", code, ExitFindings, stdout, stderr)
	}
	for _, line := range []string{
		"against OSM " + url + " (project admin), as a new OsmDeployment, which owns nothing yet (--osm: no owner)",
		"  + create vnf package openldap_knf (osm-pkgs/openldap_knf): new in Git",
		"  + create ldap (NSD openldap_ns on VIM account " + simVIM + "): declared in Git",
		"4 package uploads, 1 create, 0 upgrades",
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("output lacks %q:\n%s", line, stdout)
		}
	}
	if stats := sim.Stats(); stats.MutatingRequests != 0 {
		t.Errorf("the diff sent %d mutating requests", stats.MutatingRequests)
	}
	for _, test := range []struct {
		name     string
		args     []string
		wantExit int
	}{
		{"neither --osm nor --deployment", []string{"diff", repo}, ExitError},
		{"both", []string{"diff", repo, "--osm", url, "--deployment", "a/b"}, ExitError},
		{"a spec flag with --deployment", []string{"diff", repo, "--deployment", "a/b", "--prune"}, ExitError},
		{"an invalid revision", []string{"diff", repo, "--osm", url, "--path", "missing"}, ExitError},
	} {
		t.Run(test.name, func(t *testing.T) {
			if code, stdout, _ := run(t, test.args...); code != test.wantExit {
				t.Errorf("exit status %d, want %d; stdout:\n%s", code, test.wantExit, stdout)
			}
		})
	}
}

// filesOf reads the files below dir, by slash path.
func filesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, entry fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case entry.IsDir() && entry.Name() == ".git":
			return filepath.SkipDir // a checkout's history is no file of its artifact
		case entry.IsDir():
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// An artifact URL at a Service's in-cluster name is reached through the API server's service
// proxy; any other is fetched as it is.
func TestServiceProxyURL(t *testing.T) {
	for _, tc := range []struct{ host, artifact, want string }{
		{"https://10.0.0.1:6443", "http://source-controller.flux-system.svc.cluster.local./gitrepository/telco/gitops/abc.tar.gz",
			"https://10.0.0.1:6443/api/v1/namespaces/flux-system/services/http:source-controller:80/proxy/gitrepository/telco/gitops/abc.tar.gz"},
		{"https://api.example.com/prefix/", "http://source-controller.flux-system.svc:9090/a.tar.gz?x=1",
			"https://api.example.com/prefix/api/v1/namespaces/flux-system/services/http:source-controller:9090/proxy/a.tar.gz?x=1"},
		{"https://10.0.0.1:6443", "http://127.0.0.1:9090/a.tar.gz", ""},
		{"https://10.0.0.1:6443", "http://source-controller.svc/a.tar.gz", ""},
		{"https://10.0.0.1:6443", "http://a.b.flux-system.svc/a.tar.gz", ""},
	} {
		got, ok := serviceProxyURL(tc.host, tc.artifact)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("serviceProxyURL(%q, %q) = %q, %v; want %q", tc.host, tc.artifact, got, ok, tc.want)
		}
	}
}
