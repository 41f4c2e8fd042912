//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/devstack"
	"github.com/osmops/osmops/internal/testing/testenv"
)

var _ = Describe("Events through notification-controller", func() {
	It("sends its events through notification-controller to a generic provider", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		applyNotificationComponent(t)
		tenant := newTenant(ctx, t, false)
		tenant.expectApplied(ctx, t, tenant.seeded)

		// A receiver on loopback that keeps what notification-controller forwards.
		var mu sync.Mutex
		var received []eventv1.Event
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var event eventv1.Event
			if err := json.NewDecoder(r.Body).Decode(&event); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			received = append(received, event)
		}))
		t.Cleanup(receiver.Close)
		// A generic webhook Provider and an Alert of the tenant's OsmDeployment, in its namespace.
		alerting := objectsFromYAML(t, `
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Provider
metadata: {name: webhook}
spec: {type: generic, address: "`+receiver.URL+`"}
---
apiVersion: notification.toolkit.fluxcd.io/v1beta3
kind: Alert
metadata: {name: osm}
spec:
  providerRef: {name: webhook}
  eventSeverity: info
  eventSources:
  - {kind: OsmDeployment, name: `+tenant.Repository+`}
`)
		for _, obj := range alerting {
			obj.SetNamespace(tenant.Namespace)
		}
		g.Expect(devstack.Apply(ctx, stack.Client(), alerting...)).To(Succeed())

		// The Alert exists before this revision is pushed: the event of its application is news.
		sha := tenant.commitAndExpectApplied(ctx, t, map[string]string{ldapFile: ldapInstance(ldapInstanceName, "2")})
		eventually(ctx, t, func(g Gomega) {
			mu.Lock()
			defer mu.Unlock()
			g.Expect(received).To(ContainElement(And(
				HaveField("InvolvedObject.Kind", gitopsv1alpha1.OsmDeploymentKind),
				HaveField("InvolvedObject.Name", tenant.Repository),
				HaveField("Reason", gitopsv1alpha1.AppliedReason),
				HaveField("Message", ContainSubstring("revision "+revision(sha)+" applied")),
				// notification-controller forwards the keys of the object's group without it, but
				// the token, which only its rate limiting reads.
				HaveField("Metadata", Equal(map[string]string{eventv1.MetaRevisionKey: revision(sha)})),
			)))
		})
	})
})

// applyNotificationComponent renders notification-controller's CRDs, and a stand-in for the
// ClusterRole `flux install` makes, with config/flux/notification, checks what it patched and
// applies the CRDs: from then on, Alerts and Receivers accept osmops' kinds.
func applyNotificationComponent(t testing.TB) {
	t.Helper()
	ctx := testContext(t)
	dir := t.TempDir()
	crdDir := filepath.Join(filepath.Dir(os.Getenv(notificationControllerEnv)), "crd")
	crds, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in %s (err %v)", crdDir, err)
	}
	resources := []string{"flux-role.yaml"}
	for _, crd := range crds {
		content, err := os.ReadFile(crd)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, filepath.Base(crd)), string(content))
		resources = append(resources, filepath.Base(crd))
	}
	writeFile(t, filepath.Join(dir, "flux-role.yaml"), `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: crd-controller-flux-system
rules: []
`)
	// kustomize takes a component by a relative path only.
	component, err := filepath.Rel(dir, filepath.Join(testenv.RepoRoot(), "config", "flux", "notification"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [`+strings.Join(resources, ", ")+`]
components: [`+component+`]
`)
	var toApply []client.Object
	for _, obj := range renderKustomization(t, dir) {
		switch obj.GetName() {
		case "crd-controller-flux-system":
			rules, _, _ := unstructured.NestedSlice(obj.Object, "rules")
			if !strings.Contains(yamlString(t, rules), "gitops.osmops.io") {
				t.Errorf("the component gives Flux's controllers no access to osmops' kinds: %s", yamlString(t, rules))
			}
		case "alerts.notification.toolkit.fluxcd.io", "receivers.notification.toolkit.fluxcd.io":
			if got := yamlString(t, obj.Object); !strings.Contains(got, "- OsmDeployment") || !strings.Contains(got, "- OsmCluster") {
				t.Errorf("%s does not list osmops' kinds", obj.GetName())
			}
			toApply = append(toApply, obj)
		}
	}
	if err := devstack.Apply(ctx, stack.Client(), toApply...); err != nil {
		t.Fatal(err)
	}
}

// objectsFromYAML decodes a YAML stream of Kubernetes objects.
func objectsFromYAML(t testing.TB, stream string) []client.Object {
	t.Helper()
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	var objects []client.Object
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objects
		} else if err != nil {
			t.Fatalf("decoding %s: %v", stream, err)
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}

// writeFile writes content to path, or fails the test.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// yamlString renders value as YAML, for assertions on rendered objects.
func yamlString(t testing.TB, value any) string {
	t.Helper()
	out, err := yaml.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
