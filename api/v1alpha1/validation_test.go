package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/testenv"
)

// k8s is a client of a real API server with the CRDs installed: the schema's validation,
// CEL rules and defaults are the API server's own, not a re-implementation.
var k8s client.Client

// kubeconfig is a kubeconfig file of an admin user of that API server, for kubectl.
var kubeconfig string

func TestMain(m *testing.M) {
	os.Exit(runWithAPIServer(m))
}

func runWithAPIServer(m *testing.M) int {
	assets, err := testenv.BinaryAssetsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     testenv.CRDPaths(),
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, gitopsv1alpha1.AddToScheme, apiextensionsv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if kubeconfig, err = writeKubeconfig(env); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.Remove(kubeconfig)
	return m.Run()
}

func writeKubeconfig(env *envtest.Environment) (string, error) {
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "osmops-kubeconfig-")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = f.Write(data)
	return f.Name(), err
}

// TestInstallManifestsApply checks that `kubectl apply -k config/default --dry-run=client`
// accepts what `make deploy` installs, and that the rendered set has every part of the operator.
func TestInstallManifestsApply(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "--dry-run=client",
		"-k", filepath.Join(testenv.RepoRoot(), "config", "default")).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=client: %v\n%s", err, out)
	}
	for _, want := range []string{
		"namespace/osmops-system", "customresourcedefinition.apiextensions.k8s.io/osmclusters.gitops.osmops.io",
		"customresourcedefinition.apiextensions.k8s.io/osmdeployments.gitops.osmops.io",
		"serviceaccount/osmops-controller-manager", "clusterrole.rbac.authorization.k8s.io/osmops-manager-role",
		"deployment.apps/osmops-controller-manager", "service/osmops-controller-manager-metrics-service",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl output lacks %s:\n%s", want, out)
		}
	}
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "validation-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// object builds an unstructured osmops object from YAML, so that a test can send exactly the
// fields it means (a typed struct would send zero values for missing ones).
func object(t *testing.T, namespace, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(namespace)
	return u
}

const validCluster = `
apiVersion: gitops.osmops.io/v1alpha1
kind: OsmCluster
metadata: {name: osm}
spec:
  url: https://osm.example.com:9999
  credentialsSecretRef: {name: osm-credentials}
`

const validDeployment = `
apiVersion: gitops.osmops.io/v1alpha1
kind: OsmDeployment
metadata: {name: ldap}
spec:
  sourceRef: {kind: GitRepository, name: osm-gitops}
  clusterRef: {name: osm}
`

func TestSamplesAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "gitops_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	// The rollout example: one repository, four sites in waves (docs/rollouts.md).
	rollout, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "rollout", "gitops_*.yaml"))
	if err != nil || len(rollout) == 0 {
		t.Fatalf("no rollout samples found: %v", err)
	}
	files = append(files, rollout...)
	created := map[string]int{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := decoder.Decode(&u.Object); err != nil {
				break
			}
			if u.GroupVersionKind().Group != gitopsv1alpha1.GroupVersion.Group {
				continue // Secrets and GitRepositories are not under test here.
			}
			u.SetNamespace(ns)
			if err := k8s.Create(context.Background(), u); err != nil {
				t.Errorf("%s: %s %s rejected: %v", filepath.Base(file), u.GetKind(), u.GetName(), err)
			}
			created[u.GetKind()]++
		}
	}
	if created["OsmCluster"] != 5 || created["OsmDeployment"] != 5 {
		t.Errorf("created %v osmops samples, want one of each kind, and four of each in the rollout", created)
	}
}

func TestInvalidObjectsAreRejected(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name     string
		manifest string
		edit     func(obj map[string]any)
		want     []string // substrings of the API server's message
	}{
		{
			name: "deployment without clusterRef", manifest: validDeployment,
			edit: func(o map[string]any) { delete(spec(o), "clusterRef") },
			want: []string{"spec.clusterRef", "Required value"},
		},
		{
			name: "deployment with an unknown source kind", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["sourceRef"].(map[string]any)["kind"] = "HelmRepository" },
			want: []string{"spec.sourceRef.kind", `Unsupported value: "HelmRepository"`, "GitRepository", "OCIRepository", "Bucket"},
		},
		{
			name: "deployment with a bad interval", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["interval"] = "ten minutes" },
			want: []string{"spec.interval", "should match"},
		},
		{
			name: "deployment with a bake time on a dependency of any revision", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["dependsOn"] = []any{map[string]any{"name": "lab", "bakeTime": "1h"}} },
			want: []string{"spec.dependsOn[0]", "bakeTime needs revision Same"},
		},
		{
			name: "deployment with an unknown dependency revision", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["dependsOn"] = []any{map[string]any{"name": "lab", "revision": "Latest"}}
			},
			want: []string{"spec.dependsOn[0].revision", `Unsupported value: "Latest"`},
		},
		{
			name: "deployment with a bad timeout", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["timeout"] = "5" },
			want: []string{"spec.timeout", "should match"},
		},
		{
			name: "deployment with a drift interval over a day", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["interval"] = "25h" },
			want: []string{"spec.interval", "interval must be at most 24h"},
		},
		{
			name: "deployment with a timeout over a day", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["timeout"] = "1000h" },
			want: []string{"spec.timeout", "timeout must be at most 24h"},
		},
		{
			name: "deployment with a retry interval over a day", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["retryInterval"] = "24h1s" },
			want: []string{"spec.retryInterval", "retryInterval must be at most 24h"},
		},
		{
			name: "deployment with more upgrade retries than the bound", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["upgrade"] = map[string]any{"remediation": map[string]any{"retries": 11}}
			},
			want: []string{"spec.upgrade.remediation.retries", "less than or equal to 10"},
		},
		{
			name: "deployment with negative install retries", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["install"] = map[string]any{"remediation": map[string]any{"retries": -1}}
			},
			want: []string{"spec.install.remediation.retries", "greater than or equal to 0"},
		},
		{
			name: "deployment with two suffixes in one fileExtensions item", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["fileExtensions"] = []any{".ns .osm"} },
			want: []string{"spec.fileExtensions[0]", "should match"},
		},
		{
			name: "deployment with a fileExtensions item without its dot", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["fileExtensions"] = []any{".ops.yaml", "dir/x.yaml"} },
			want: []string{"spec.fileExtensions[1]", "should match"},
		},
		{
			name: "deployment with an unknown deletion policy", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["deletionPolicy"] = "Retain" },
			want: []string{"spec.deletionPolicy", `Unsupported value: "Retain"`, "MirrorPrune", "WaitForTermination"},
		},
		{
			name: "deployment with a variable envsubst cannot read", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["postBuild"] = map[string]any{"substitute": map[string]any{"1env": "x"}}
			},
			want: []string{"spec.postBuild", "variable names must match"},
		},
		{
			name: "deployment substituting from a Secret of another namespace", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["postBuild"] = map[string]any{"substituteFrom": []any{map[string]any{"kind": "Secret", "name": "other/vars"}}}
			},
			want: []string{"spec.postBuild.substituteFrom[0].name", "should match"},
		},
		{
			name: "cluster with a request timeout of an hour", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["timeout"] = "1h" },
			want: []string{"spec.timeout", "timeout must be at most 5m"},
		},
		{
			name: "cluster with a health check interval over a day", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["interval"] = "48h" },
			want: []string{"spec.interval", "interval must be at most 24h"},
		},
		{
			name: "deployment with a path leaving the repository", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["path"] = "deploy/../../etc" },
			want: []string{"spec.path", "must be relative and must not contain '..'"},
		},
		{
			name: "cluster with a URL that is not http", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["url"] = "ftp://osm.example.com" },
			want: []string{"spec.url", "url must be an http:// or https:// URL with a host"},
		},
		{
			name: "cluster with a URL that is not a URL", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["url"] = "osm.example.com:9999" },
			want: []string{"spec.url", "url must be an http:// or https:// URL with a host"},
		},
		{
			name: "cluster with credentials in the URL", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["url"] = "https://admin:secret@osm.example.com" },
			want: []string{"spec.url", "url must not carry credentials"},
		},
		{
			name: "cluster without a credentials Secret", manifest: validCluster,
			edit: func(o map[string]any) { delete(spec(o), "credentialsSecretRef") },
			want: []string{"spec.credentialsSecretRef", "Required value"},
		},
		{
			name: "cluster with maxConcurrentRequests 0", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["maxConcurrentRequests"] = int64(0) },
			want: []string{"spec.maxConcurrentRequests", "should be greater than or equal to 1"},
		},
		{
			name: "cluster with maxConcurrentRequests 1000", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["maxConcurrentRequests"] = int64(1000) },
			want: []string{"spec.maxConcurrentRequests", "should be less than or equal to 64"},
		},
		{
			name: "cluster with a bad timeout", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["timeout"] = "30 seconds" },
			want: []string{"spec.timeout", "should match"},
		},
		{
			name: "cluster with a CA over plain http", manifest: validCluster,
			edit: func(o map[string]any) {
				spec(o)["url"] = "http://osm.example.com:9999"
				spec(o)["caSecretRef"] = map[string]any{"name": "osm-ca"}
			},
			want: []string{"caSecretRef needs an https URL"},
		},
		// The counts and ranges docs/security.md lists for the specs' lists and durations.
		{
			name: "deployment with 33 dependencies", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["dependsOn"] = repeated(33, map[string]any{"name": "lab"}) },
			want: []string{"spec.dependsOn", "must have at most 32 items"},
		},
		{
			name: "deployment with 33 health checks", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["healthChecks"] = repeated(33, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "smoke"})
			},
			want: []string{"spec.healthChecks", "must have at most 32 items"},
		},
		{
			name: "deployment with 17 health check expressions", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["healthCheckExprs"] = repeated(17, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "current": "true"})
			},
			want: []string{"spec.healthCheckExprs", "must have at most 16 items"},
		},
		{
			name: "deployment with a health check expression over 1024 characters", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["healthCheckExprs"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "current": strings.Repeat(" ", 1024) + "true"}}
			},
			want: []string{"spec.healthCheckExprs", "at most 1024 characters"},
		},
		{
			name: "deployment substituting from 17 objects", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["postBuild"] = map[string]any{"substituteFrom": repeated(17, map[string]any{"kind": "ConfigMap", "name": "vars"})}
			},
			want: []string{"spec.postBuild.substituteFrom", "must have at most 16 items"},
		},
		{
			name: "deployment substituting from a kind that is neither ConfigMap nor Secret", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["postBuild"] = map[string]any{"substituteFrom": []any{map[string]any{"kind": "Namespace", "name": "vars"}}}
			},
			want: []string{"spec.postBuild.substituteFrom[0].kind", `Unsupported value: "Namespace"`},
		},
		{
			name: "deployment with a source of another API version", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["sourceRef"].(map[string]any)["apiVersion"] = "source.toolkit.fluxcd.io/v1beta1"
			},
			want: []string{"spec.sourceRef.apiVersion", "Unsupported value"},
		},
		{
			name: "deployment with an unknown drift detection mode", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["driftDetection"] = map[string]any{"mode": "sometimes"} },
			want: []string{"spec.driftDetection.mode", `Unsupported value: "sometimes"`},
		},
		{
			name: "deployment with a health check timeout over a day", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["healthCheckTimeout"] = "25h" },
			want: []string{"healthCheckTimeout must be at most 24h"},
		},
		{
			name: "deployment with a bake time over a week", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["dependsOn"] = []any{map[string]any{"name": "lab", "revision": "Same", "bakeTime": "169h"}}
			},
			want: []string{"bakeTime must be at most 168h"},
		},
		{
			name: "cluster with a project name over 253 characters", manifest: validCluster,
			edit: func(o map[string]any) { spec(o)["project"] = strings.Repeat("p", 254) },
			want: []string{"spec.project", "253"},
		},
		{
			name: "deployment naming an OsmCluster over 253 characters", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["clusterRef"] = map[string]any{"name": strings.Repeat("c", 254)} },
			want: []string{"spec.clusterRef", "at most 253 characters"},
		},
		{
			name: "deployment depending on a name over 253 characters", manifest: validDeployment,
			edit: func(o map[string]any) { spec(o)["dependsOn"] = []any{map[string]any{"name": strings.Repeat("d", 254)}} },
			want: []string{"spec.dependsOn[0].name", "253"},
		},
		{
			name: "deployment with a health check kind over 63 characters", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["healthChecks"] = []any{map[string]any{"kind": strings.Repeat("K", 64), "name": "smoke"}}
			},
			want: []string{"spec.healthChecks", "kind is at most 63 characters"},
		},
		{
			name: "deployment with an expression kind over 63 characters", manifest: validDeployment,
			edit: func(o map[string]any) {
				spec(o)["healthCheckExprs"] = []any{map[string]any{"apiVersion": "v1", "kind": strings.Repeat("K", 64), "current": "true"}}
			},
			want: []string{"spec.healthCheckExprs", "kind is at most 63 characters"},
		},
		{
			name: "cluster with a credentials Secret name over 253 characters", manifest: validCluster,
			edit: func(o map[string]any) {
				spec(o)["credentialsSecretRef"] = map[string]any{"name": strings.Repeat("s", 254)}
			},
			want: []string{"spec.credentialsSecretRef", "at most 253 characters"},
		},
		{
			name: "cluster with a CA and TLS verification off", manifest: validCluster,
			edit: func(o map[string]any) {
				spec(o)["caSecretRef"] = map[string]any{"name": "osm-ca"}
				spec(o)["insecureSkipTLSVerify"] = true
			},
			want: []string{"caSecretRef and insecureSkipTLSVerify are mutually exclusive"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, ns, tt.manifest)
			tt.edit(obj.Object)
			err := k8s.Create(context.Background(), obj)
			if err == nil {
				t.Fatalf("accepted, want rejected")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not contain %q", err.Error(), want)
				}
			}
		})
	}
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

// repeated is a list of n copies of item.
func repeated(n int, item map[string]any) []any {
	list := make([]any, n)
	for i := range list {
		list[i] = item
	}
	return list
}

func TestDefaultsAreApplied(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, object(t, ns, validCluster)); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, object(t, ns, validDeployment)); err != nil {
		t.Fatal(err)
	}

	cluster := &gitopsv1alpha1.OsmCluster{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "osm"}, cluster); err != nil {
		t.Fatal(err)
	}
	gotCluster := []any{cluster.Spec.Project, cluster.Spec.Timeout.Duration, cluster.Spec.Interval.Duration,
		cluster.Spec.MaxConcurrentRequests, cluster.Spec.InsecureSkipTLSVerify}
	wantCluster := []any{"admin", 30 * time.Second, 5 * time.Minute, int32(8), false}
	if fmt.Sprint(gotCluster) != fmt.Sprint(wantCluster) {
		t.Errorf("OsmCluster defaults = %v, want %v", gotCluster, wantCluster)
	}

	deployment := &gitopsv1alpha1.OsmDeployment{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ldap"}, deployment); err != nil {
		t.Fatal(err)
	}
	gotDeployment := []any{deployment.Spec.Interval.Duration, deployment.Spec.Timeout.Duration,
		deployment.Spec.Prune, deployment.Spec.Suspend, deployment.Spec.AdoptExisting,
		deployment.Spec.Path, deployment.Spec.FileExtensions, deployment.Spec.RetryInterval, deployment.Spec.DeletionPolicy}
	wantDeployment := []any{10 * time.Minute, 10 * time.Minute, false, false, false, "", []string(nil),
		(*metav1.Duration)(nil), gitopsv1alpha1.DeletionPolicyMirrorPrune}
	if fmt.Sprint(gotDeployment) != fmt.Sprint(wantDeployment) {
		t.Errorf("OsmDeployment defaults = %v, want %v", gotDeployment, wantDeployment)
	}
}

func TestPrinterColumnsAreServed(t *testing.T) {
	tests := []struct {
		crd        string
		shortNames []string
		columns    []string
	}{
		{
			crd: "osmdeployments.gitops.osmops.io", shortNames: []string{"osmd"},
			columns: []string{"Ready", "Status", "Revision", "NS", "Age", "Cluster", "Attempted", "Suspended"},
		},
		{
			crd: "osmclusters.gitops.osmops.io", shortNames: []string{"osmc"},
			columns: []string{"URL", "Ready", "Status", "Age", "Project", "Deployments"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.crd, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := k8s.Get(context.Background(), client.ObjectKey{Name: tt.crd}, crd); err != nil {
				t.Fatal(err)
			}
			var columns []string
			for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
				columns = append(columns, c.Name)
			}
			if fmt.Sprint(columns) != fmt.Sprint(tt.columns) {
				t.Errorf("printer columns = %v, want %v", columns, tt.columns)
			}
			if fmt.Sprint(crd.Spec.Names.ShortNames) != fmt.Sprint(tt.shortNames) {
				t.Errorf("short names = %v, want %v", crd.Spec.Names.ShortNames, tt.shortNames)
			}
			if fmt.Sprint(crd.Spec.Names.Categories) != "[osm]" {
				t.Errorf("categories = %v, want [osm]", crd.Spec.Names.Categories)
			}
		})
	}
}
