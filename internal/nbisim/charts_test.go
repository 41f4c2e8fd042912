package nbisim

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// The Helm side as OSM 19's LCM and real Helm behave (real-osm/README.md, results/smoke-failures.out).

// ldapWithModel is ldapCreateBody with a kdu_model for KDU ldap.
func ldapWithModel(name, nsdID, vimID, model string) map[string]any {
	body := ldapCreateBody(name, nsdID, vimID, map[string]any{"replicaCount": "1"})
	kdu := body["additionalParamsForVnf"].([]any)[0].(map[string]any)["additionalParamsForKdu"].([]any)[0].(map[string]any)
	kdu["kdu_model"] = model
	return body
}

// kduAction posts an action on KDU ldap, lets LCM run it and returns the operation.
func (h *harness) kduAction(nsID, primitive string, params map[string]any) map[string]any {
	h.t.Helper()
	id := h.must(http.StatusAccepted, "POST", nsInstancesPath+"/"+nsID+"/action", map[string]any{
		"member_vnf_index": "openldap", "kdu_name": "ldap", "primitive": primitive, "primitive_params": params,
	}).object(h.t)["id"].(string)
	h.clock.Step(testOperationDelay)
	return h.operation(id)
}

var releaseName = regexp.MustCompile(`^stable-openldap-1-2-7-00[0-9]{8}$`)

func TestReleaseNamesAsLCMMakesThem(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapWithModel("ldap", nsdID, h.vimID("vim1"), "stable/openldap:1.2.7"))
	h.clock.Step(testOperationDelay)
	name := dig(h.ns(nsID), "_admin", "deployed", "K8s", 0, "kdu-instance").(string)
	if !releaseName.MatchString(name) {
		t.Errorf("release name %q, want stable-openldap-1-2-7-<ten digits> (Helm refuses a ':')", name)
	}
	// The name keeps the version it was installed with after an upgrade to another one.
	if op := h.kduAction(nsID, "upgrade", map[string]any{"kdu_model": "stable/openldap:1.2.8", "replicaCount": "2"}); op["operationState"] != "COMPLETED" {
		t.Fatalf("upgrade: %v %v", op["operationState"], op["errorMessage"])
	}
	if after := dig(h.ns(nsID), "_admin", "deployed", "K8s", 0, "kdu-instance"); after != name {
		t.Errorf("release name %v after the upgrade, want %s", after, name)
	}

	for model, want := range map[string]string{
		"stable/openldap":                      "stable-openldap-",
		"/app/storage/pkg/charts/My_Chart.tgz": "my-chart-tgz-",
		"https://charts.example/ldap-1.2.tgz":  "ldap-1-2-tgz-",
		"9lives/chart":                         "a9lives-chart-",
		strings.Repeat("x", 40):                strings.Repeat("x", 35) + "-",
	} {
		got := kduInstanceName(&nsRecord{id: "ns"}, &vnfRecord{}, &kdurDoc{KduName: "k", HelmChart: model})
		if !strings.HasPrefix(got, want) || len(got) != len(want)+10 {
			t.Errorf("release of %q: %q, want %s<ten digits>", model, got, want)
		}
	}
	if got := kduInstanceName(&nsRecord{id: "ns"}, &vnfRecord{}, &kdurDoc{KduDeploymentName: "mine", HelmChart: "stable/openldap"}); got != "mine" {
		t.Errorf("release with a kdu-deployment-name: %q", got)
	}
}

func TestInstantiateOfAChartVersionTheRepositoryLacksFails(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	nsID, opID := h.createNS(ldapWithModel("bad", nsdID, h.vimID("vim1"), "stable/openldap:9.9.9"))
	h.clock.Step(testOperationDelay)

	ns := h.ns(nsID)
	k8s := dig(ns, "_admin", "deployed", "K8s", 0).(map[string]any)
	name := k8s["kdu-instance"].(string)
	if !regexp.MustCompile(`^stable-openldap-9-9-9-00[0-9]{8}$`).MatchString(name) {
		t.Errorf("release name %q", name)
	}
	detail := regexp.MustCompile(`^Deploying KDU ldap: Error executing command: env KUBECONFIG=/app/storage/` + regexp.QuoteMeta(k8s["k8scluster-uuid"].(string)) +
		`/\.kube/config /usr/local/bin/helm3 install ` + name + ` --atomic --output yaml  -f [0-9]{10}\.yaml --timeout 1800s --namespace ` +
		regexp.QuoteMeta(k8s["namespace"].(string)) + `   stable/openldap --version 9\.9\.9\n` +
		regexp.QuoteMeta(`Output: Error: INSTALLATION FAILED: chart "openldap" matching 9.9.9 not found in stable index. (try 'helm repo update'): no chart version found for openldap-9.9.9`) + `$`)
	const stage = "Stage 2/5: deployment of KDUs, VMs and execution environments."

	op := h.operation(opID)
	errorMessage, _ := op["errorMessage"].(string)
	if op["operationState"] != "FAILED" || !strings.HasPrefix(errorMessage, stage+" Detail: ") || !detail.MatchString(strings.TrimPrefix(errorMessage, stage+" Detail: ")) {
		t.Errorf("instantiate %v, errorMessage %q", op["operationState"], errorMessage)
	}
	if status, _ := op["detailed-status"].(string); !detail.MatchString(status) {
		t.Errorf("instantiate detailed-status %q", status)
	}
	if ns["nsState"] != "BROKEN" || ns["operational-status"] != "failed" ||
		ns["errorDescription"] != fmt.Sprintf("Operation: INSTANTIATING.%s, %s", opID, stage) || !detail.MatchString(fmt.Sprint(ns["errorDetail"])) {
		t.Errorf("NS record: nsState %v, operational-status %v, errorDescription %v, errorDetail %v",
			ns["nsState"], ns["operational-status"], ns["errorDescription"], ns["errorDetail"])
	}
	vnf := h.must(http.StatusOK, "GET", vnfInstancePath+"?nsr-id-ref="+nsID, nil).list(t)[0]
	if status := dig(vnf, "kdur", 0, "status"); status != "ERROR" {
		t.Errorf("kdur status %v, want ERROR", status)
	}

	// An upgrade of the KDU Helm never installed finds no release.
	op = h.kduAction(nsID, "upgrade", map[string]any{"replicaCount": "2"})
	if want := "FAILED Executing kdu upgrade: kdu_instance " + name + " not found"; op["operationState"] != "FAILED" || op["errorMessage"] != want {
		t.Errorf("upgrade of the broken KDU: %v %q, want FAILED %q", op["operationState"], op["errorMessage"], want)
	}
}

func TestUpgradeToAChartVersionTheRepositoryLacksLeavesTheRelease(t *testing.T) {
	h := newLoggedIn(t, Config{})
	_, nsdID := h.onboardOpenLDAP()
	nsID, _ := h.createNS(ldapWithModel("good", nsdID, h.vimID("vim1"), "stable/openldap:1.2.7"))
	h.clock.Step(testOperationDelay)
	k8s := dig(h.ns(nsID), "_admin", "deployed", "K8s", 0).(map[string]any)

	op := h.kduAction(nsID, "upgrade", map[string]any{"kdu_model": "stable/openldap:9.9.9", "replicaCount": "1"})
	want := regexp.MustCompile(`^` + regexp.QuoteMeta("FAILED Executing kdu upgrade: Error executing command: env KUBECONFIG=/app/storage/"+
		k8s["k8scluster-uuid"].(string)+"/.kube/config /usr/local/bin/helm3 upgrade "+k8s["kdu-instance"].(string)+" stable/openldap --namespace "+
		k8s["namespace"].(string)+" --atomic --output yaml -f ") + `[0-9]{10}\.yaml` + regexp.QuoteMeta(" --timeout 1800s   --reuse-values --version 9.9.9\n"+
		`Output: Error: chart "openldap" matching 9.9.9 not found in stable index. (try 'helm repo update'): no chart version found for openldap-9.9.9`) + `$`)
	if message, _ := op["errorMessage"].(string); op["operationState"] != "FAILED" || !want.MatchString(message) {
		t.Errorf("upgrade %v, errorMessage %q", op["operationState"], message)
	}
	if ns := h.ns(nsID); ns["nsState"] != "READY" {
		t.Errorf("nsState %v, want READY", ns["nsState"])
	}
	kdu := h.sim.State().NSInstances[0].KDUs[0]
	if kdu.Revision != 1 || kdu.ChartVersion != "1.2.7" || kdu.Model != "stable/openldap:1.2.7" {
		t.Errorf("release after the failed upgrade: revision %d, chart %s version %s", kdu.Revision, kdu.Model, kdu.ChartVersion)
	}

	// A chart the repository does not have at all.
	op = h.kduAction(nsID, "upgrade", map[string]any{"kdu_model": "stable/nope", "replicaCount": "1"})
	if message, _ := op["errorMessage"].(string); !strings.HasSuffix(message, `Output: Error: chart "nope" matching  not found in stable index. (try 'helm repo update'): no chart name found`) {
		t.Errorf("upgrade to a missing chart: %q", message)
	}
}

// Without kdu_model LCM names the deployed chart without its version, and Helm takes the newest
// of the repository: on OSM 19's LCM 1.2.7 became 1.2.8 on a replicaCount change.
func TestUpgradeWithoutKDUModelMovesToTheNewestChart(t *testing.T) {
	for _, test := range []struct {
		name    string
		charts  ChartCatalog
		params  map[string]any
		model   string
		version string
	}{
		{"values only: the newest chart", nil, map[string]any{"replicaCount": "2"}, "stable/openldap", "1.2.8"},
		{"the chart named: it stays", nil, map[string]any{"replicaCount": "2", "kdu_model": "stable/openldap:1.2.7"}, "stable/openldap:1.2.7", "1.2.7"},
		{"a newer version published later is taken", ChartCatalog{"stable": {"openldap": {"1.2.7", "1.2.10", "1.2.9", "2.0.0-rc.1"}}},
			map[string]any{"replicaCount": "2"}, "stable/openldap", "1.2.10"},
		{"a repository the catalog does not list holds any version", ChartCatalog{"bitnami": {"openldap": {"1.0.0"}}},
			map[string]any{"replicaCount": "2"}, "stable/openldap", ""},
	} {
		t.Run(test.name, func(t *testing.T) {
			h := newLoggedIn(t, Config{Charts: test.charts})
			_, nsdID := h.onboardOpenLDAP()
			nsID, _ := h.createNS(ldapWithModel("ldap", nsdID, h.vimID("vim1"), "stable/openldap:1.2.7"))
			h.clock.Step(testOperationDelay)
			if op := h.kduAction(nsID, "upgrade", test.params); op["operationState"] != "COMPLETED" {
				t.Fatalf("upgrade: %v %v", op["operationState"], op["errorMessage"])
			}
			kdu := h.sim.State().NSInstances[0].KDUs[0]
			if kdu.Model != test.model || kdu.ChartVersion != test.version {
				t.Errorf("release runs %s version %q, want %s version %q", kdu.Model, kdu.ChartVersion, test.model, test.version)
			}
			// OSM's records never show it.
			if model := dig(h.ns(nsID), "_admin", "deployed", "K8s", 0, "kdu-model"); model != "stable/openldap:1.2.7" {
				t.Errorf("kdu-model %v", model)
			}
		})
	}
}

func TestChartCatalogEntries(t *testing.T) {
	c := ChartCatalog{}
	for _, entry := range []string{"stable/openldap:1.2.7", "stable/openldap:1.2.8", "stable/openldap:1.2.7", "cetic/phpldapadmin:0.1.2"} {
		if err := c.AddChart(entry); err != nil {
			t.Errorf("%s: %v", entry, err)
		}
	}
	if got := fmt.Sprint(c); got != "map[cetic:map[phpldapadmin:[0.1.2]] stable:map[openldap:[1.2.7 1.2.8]]]" {
		t.Errorf("catalog %s", got)
	}
	for _, entry := range []string{"openldap:1.2.7", "stable/openldap", "stable/openldap:latest", "/a/b/c:1.0.0", "stable/a/b:1.0.0"} {
		if err := c.AddChart(entry); err == nil {
			t.Errorf("%s: accepted", entry)
		}
	}
}
