package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

// core is an NS instance of the full form: VNF amf runs KDUs amf and metrics, VNF smf runs KDU
// smf, each with values; amf names its chart.
func core(change func(*gitops.NsInstance)) gitops.NsInstance {
	ns := gitops.NsInstance{
		Name: "core", NsdName: "core_ns", VimAccountName: "site1",
		VNFs: []gitops.VNF{
			{MemberVnfIndex: "amf", KDUs: []gitops.KDU{
				{Name: "amf", Model: "free5gc/amf:1.0.0", Params: map[string]any{"replicaCount": "1"}},
				{Name: "metrics", Params: map[string]any{"interval": "10s"}},
			}},
			{MemberVnfIndex: "smf", KDUs: []gitops.KDU{{Name: "smf", Params: map[string]any{"replicaCount": "1"}}}},
		},
		Source: gitops.SourceRef{File: "core.osmops.yaml", Line: 1, FieldLines: map[string]int{
			"params": 5, "k8sNamespace": 7, "vnfs[0].params": 11, "vnfs[0].kdus[1].k8sNamespace": 18,
		}},
	}
	if change != nil {
		change(&ns)
	}
	return ns.Sealed()
}

func TestCreateRequestOfSeveralVNFsAndKDUs(t *testing.T) {
	ns := core(func(ns *gitops.NsInstance) {
		ns.Params = map[string]any{"region": "eu1"}
		ns.K8sNamespace = "core"
		ns.DeployTimeout = 10 * time.Minute
		ns.VNFs[0].Params = map[string]any{"log_level": "debug"}
		ns.VNFs[0].KDUs[1].K8sNamespace = "metrics"
		ns.VNFs = append(ns.VNFs, gitops.VNF{MemberVnfIndex: "upf", KDUs: []gitops.KDU{{Name: "upf"}}})
	})
	got := CreateRequest(ns, "nsd-1", "vim-1", self)
	want := osm.NSInstanceCreate{
		Name: "core", NsdID: "nsd-1", VIMAccountID: "vim-1",
		AdditionalParamsForNs: map[string]any{"region": "eu1", OwnerParam: self.Marker()},
		K8sNamespace:          "core", TimeoutNsDeploy: 600,
		AdditionalParamsForVnf: []osm.VnfParams{
			{MemberVnfIndex: "amf", AdditionalParams: map[string]any{"log_level": "debug"}, AdditionalParamsForKdu: []osm.KDUParams{
				{KDUName: "amf", KDUModel: "free5gc/amf:1.0.0", AdditionalParams: map[string]any{"replicaCount": "1"}},
				{KDUName: "metrics", K8sNamespace: "metrics", AdditionalParams: map[string]any{"interval": "10s"}},
			}},
			{MemberVnfIndex: "smf", AdditionalParamsForKdu: []osm.KDUParams{{KDUName: "smf", AdditionalParams: map[string]any{"replicaCount": "1"}}}},
			// upf's KDU declares its name alone: OSM's schema refuses such an item, and runs the
			// KDU anyway.
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("create request (-want +got):\n%s", diff)
	}
	if ns.Params["osmops_owner"] != nil {
		t.Error("the request changed the declaration's params")
	}
	upgrade := UpgradeRequest("amf", ns.VNFs[0].KDUs[0], ns.VNFs[0].KDUs[0].Model)
	if diff := cmp.Diff(osm.KDUUpgrade{MemberVnfIndex: "amf", KDUName: "amf", Params: map[string]any{"replicaCount": "1"}, Model: "free5gc/amf:1.0.0"}, upgrade); diff != "" {
		t.Errorf("upgrade request (-want +got):\n%s", diff)
	}
}

// coreRecords are the VNF records OSM made for core(nil): the KDUs run the declared values,
// amf the chart its kdu_model named at creation.
func coreRecords() []osm.VNFInstance {
	return []osm.VNFInstance{
		{NSInstanceID: "ns-1", MemberVnfIndex: "amf", KDURecords: []osm.KDURecord{
			{KDUName: "amf", HelmChart: "free5gc/amf:1.0.0", AdditionalParams: `{"replicaCount": "1"}`, K8sNamespace: "project-1"},
			{KDUName: "metrics", HelmChart: "prometheus/exporter", AdditionalParams: `{"interval": "10s"}`, K8sNamespace: "project-1"},
		}},
		{NSInstanceID: "ns-1", MemberVnfIndex: "smf", KDURecords: []osm.KDURecord{
			{KDUName: "smf", HelmChart: "free5gc/smf", AdditionalParams: `{"replicaCount": "1"}`, K8sNamespace: "project-1"},
		}},
	}
}

func TestPlanOfSeveralKDUs(t *testing.T) {
	unchanged := core(nil).Digest()
	completedUpgrade := func(member, kdu string, start float64, params string) osm.Operation {
		op := upgrade("ns-1", kdu, "upgrade", start, params)
		op.OperationParams["member_vnf_index"] = member
		return op
	}
	// amfRan is the completed upgrade of KDU amf with primitive_params.
	amfRan := func(params string) []osm.Operation {
		return []osm.Operation{completedUpgrade("amf", "amf", 10, params)}
	}
	tests := []struct {
		name      string
		declared  gitops.NsInstance
		change    func(*osm.NSInstance, []osm.VNFInstance) []osm.VNFInstance
		completed []osm.Operation
		last      InstanceRecord
		upgrades  []string
		problems  []string
		// force is spec.force; deletes are the deletes planned, as "name: reason".
		force   bool
		deletes []string
		state   InstanceState
	}{
		{
			name:     "nothing changed",
			declared: core(nil), last: entry("core", "ns-1", unchanged, InstanceReady),
			state: InstanceReady,
		},
		{
			name:     "one KDU of three changed in Git: one upgrade, of that KDU",
			declared: core(func(ns *gitops.NsInstance) { ns.VNFs[1].KDUs[0].Params = map[string]any{"replicaCount": "2"} }),
			last:     entry("core", "ns-1", unchanged, InstanceReady),
			upgrades: []string{`smf/smf {"replicaCount":"2"} free5gc/smf: KDU smf of VNF smf: values changed in Git`},
			state:    InstanceProgressing,
		},
		{
			name:     "a values change of a KDU that names no chart names the chart the KDU runs, version included",
			declared: core(func(ns *gitops.NsInstance) { ns.VNFs[1].KDUs[0].Params = map[string]any{"replicaCount": "2"} }),
			change: func(ns *osm.NSInstance, vnfs []osm.VNFInstance) []osm.VNFInstance {
				vnfs[1].KDURecords[0].HelmChart = "free5gc/smf:3.0.0"
				return vnfs
			},
			last:     entry("core", "ns-1", unchanged, InstanceReady),
			upgrades: []string{`smf/smf {"replicaCount":"2"} free5gc/smf:3.0.0: KDU smf of VNF smf: values changed in Git`},
			state:    InstanceProgressing,
		},
		{
			name:     "... and the chart an upgrade outside Git moved it to, not the VNF record's",
			declared: core(func(ns *gitops.NsInstance) { ns.VNFs[1].KDUs[0].Params = map[string]any{"replicaCount": "2"} }),
			completed: []osm.Operation{completedUpgrade("smf", "smf", 10,
				`{"replicaCount": "1", "kdu_model": "free5gc/smf:3.1.0"}`)},
			last:     entry("core", "ns-1", unchanged, InstanceReady),
			upgrades: []string{`smf/smf {"replicaCount":"2"} free5gc/smf:3.1.0: KDU smf of VNF smf: values changed in Git`},
			state:    InstanceProgressing,
		},
		{
			name: "two KDUs changed in Git: one upgrade per plan, the first",
			declared: core(func(ns *gitops.NsInstance) {
				ns.VNFs[0].KDUs[1].Params = map[string]any{"interval": "5s"}
				ns.VNFs[1].KDUs[0].Params = map[string]any{"replicaCount": "2"}
			}),
			last:     entry("core", "ns-1", unchanged, InstanceReady),
			upgrades: []string{`amf/metrics {"interval":"5s"} prometheus/exporter: KDU metrics of VNF amf: values changed in Git (more follow)`},
			state:    InstanceProgressing,
		},
		{
			name: "once the first upgrade completed, the second KDU follows, still as a change in Git",
			declared: core(func(ns *gitops.NsInstance) {
				ns.VNFs[0].KDUs[1].Params = map[string]any{"interval": "5s"}
				ns.VNFs[1].KDUs[0].Params = map[string]any{"replicaCount": "2"}
			}),
			completed: []osm.Operation{completedUpgrade("amf", "metrics", 10, `{"interval": "5s", "kdu_reset_values": "true"}`)},
			last:      entry("core", "ns-1", "", InstanceProgressing),
			upgrades:  []string{`smf/smf {"replicaCount":"2"} free5gc/smf: KDU smf of VNF smf: values changed in Git`},
			state:     InstanceProgressing,
		},
		{
			name:     "while OSM runs an operation on the instance, nothing is sent",
			declared: core(func(ns *gitops.NsInstance) { ns.VNFs[1].KDUs[0].Params = map[string]any{"replicaCount": "2"} }),
			change: func(ns *osm.NSInstance, vnfs []osm.VNFInstance) []osm.VNFInstance {
				ns.CurrentOperation = "UPGRADING"
				return vnfs
			},
			last:  entry("core", "ns-1", unchanged, InstanceProgressing),
			state: InstanceProgressing,
		},
		{
			name:     "a chart version changed in Git upgrades the KDU to it, with its values",
			declared: core(func(ns *gitops.NsInstance) { ns.VNFs[0].KDUs[0].Model = "free5gc/amf:1.1.0" }),
			last:     entry("core", "ns-1", unchanged, InstanceReady),
			upgrades: []string{`amf/amf {"replicaCount":"1"} free5gc/amf:1.1.0: KDU amf of VNF amf: chart changed in Git`},
			state:    InstanceProgressing,
		},
		{
			name:      "after that upgrade completed, the VNF record still names the old chart: nothing is sent again",
			declared:  core(func(ns *gitops.NsInstance) { ns.VNFs[0].KDUs[0].Model = "free5gc/amf:1.1.0" }),
			completed: amfRan(`{"replicaCount": "1", "kdu_reset_values": "true", "kdu_model": "free5gc/amf:1.1.0"}`),
			last:      entry("core", "ns-1", core(func(ns *gitops.NsInstance) { ns.VNFs[0].KDUs[0].Model = "free5gc/amf:1.1.0" }).Digest(), InstanceReady),
			state:     InstanceReady,
		},
		{
			name:      "a chart changed in OSM outside Git is restored",
			declared:  core(nil),
			completed: amfRan(`{"replicaCount": "1", "kdu_reset_values": "true", "kdu_model": "free5gc/amf:2.0.0"}`),
			last:      entry("core", "ns-1", unchanged, InstanceReady),
			upgrades:  []string{`amf/amf {"replicaCount":"1"} free5gc/amf:1.0.0: KDU amf of VNF amf: chart changed in OSM outside Git: restoring what Git declares`},
			state:     InstanceProgressing,
		},
		{
			name:      "an upgrade outside Git without kdu_model drops the chart's version: restored",
			declared:  core(nil),
			completed: amfRan(`{"replicaCount": "1", "kdu_reset_values": "true"}`),
			last:      entry("core", "ns-1", unchanged, InstanceReady),
			upgrades:  []string{`amf/amf {"replicaCount":"1"} free5gc/amf:1.0.0: KDU amf of VNF amf: chart changed in OSM outside Git: restoring what Git declares`},
			state:     InstanceProgressing,
		},
		{
			name:     "a KDU that names no chart never compares charts",
			declared: core(nil),
			completed: []osm.Operation{completedUpgrade("smf", "smf", 10,
				`{"replicaCount": "1", "kdu_reset_values": "true", "kdu_model": "free5gc/smf:9.9.9"}`)},
			last:  entry("core", "ns-1", unchanged, InstanceReady),
			state: InstanceReady,
		},
		{
			name: "values and chart changed in Git: one upgrade",
			declared: core(func(ns *gitops.NsInstance) {
				ns.VNFs[0].KDUs[0].Model = "free5gc/amf:1.1.0"
				ns.VNFs[0].KDUs[0].Params = nil
			}),
			last:     entry("core", "ns-1", unchanged, InstanceReady),
			upgrades: []string{`amf/amf {} free5gc/amf:1.1.0: KDU amf of VNF amf: values and chart changed in Git`},
			state:    InstanceProgressing,
		},
		{
			name: "NS params, namespace, VNF params and a KDU's namespace changed in Git: OSM cannot change them in place",
			declared: core(func(ns *gitops.NsInstance) {
				ns.Params = map[string]any{"region": "eu2"}
				ns.K8sNamespace = "core"
				ns.VNFs[0].Params = map[string]any{"log_level": "info"}
				ns.VNFs[0].KDUs[1].K8sNamespace = "metrics"
				ns.VNFs[1].KDUs[0].Params = map[string]any{"replicaCount": "2"}
			}),
			change: func(ns *osm.NSInstance, vnfs []osm.VNFInstance) []osm.VNFInstance {
				ns.AdditionalParamsForNs["region"] = "eu1"
				vnfs[0].AdditionalParamsForVnf = map[string]osm.LooseString{"log_level": "debug"}
				return vnfs
			},
			last: entry("core", "ns-1", unchanged, InstanceReady),
			problems: []string{
				`core.osmops.yaml:5: NS instance "core": params differ from the additionalParamsForNs it was created with; OSM reads it only when it creates an instance and cannot change it in place: give the instance a new name, delete it first, or set spec.force to replace it`,
				`core.osmops.yaml:7: NS instance "core": k8sNamespace "core" differs from the one it was created with (""); OSM reads it only when it creates an instance and cannot change it in place: give the instance a new name, delete it first, or set spec.force to replace it`,
				`core.osmops.yaml:11: NS instance "core": the params of VNF amf differ from those it was created with; OSM reads it only when it creates an instance and cannot change it in place: give the instance a new name, delete it first, or set spec.force to replace it`,
				`core.osmops.yaml:18: NS instance "core": KDU metrics of VNF amf runs in namespace "project-1", not "metrics"; OSM reads it only when it creates an instance and cannot change it in place: give the instance a new name, delete it first, or set spec.force to replace it`,
			},
		},
		{
			name: "NS params and namespace changed in Git, with spec.force: the instance is replaced",
			declared: core(func(ns *gitops.NsInstance) {
				ns.Params = map[string]any{"region": "eu2"}
				ns.K8sNamespace = "core"
			}),
			change: func(ns *osm.NSInstance, vnfs []osm.VNFInstance) []osm.VNFInstance {
				ns.AdditionalParamsForNs["region"] = "eu1"
				return vnfs
			},
			force: true,
			last:  entry("core", "ns-1", unchanged, InstanceReady),
			deletes: []string{`core: replacing it (params differ from the additionalParamsForNs it was created with; ` +
				`k8sNamespace "core" differs from the one it was created with ("")): terminating the old instance`},
			state: InstanceReplacing,
		},
		{
			name: "params that OSM keeps as YAML text, and scalars as text, compare equal",
			declared: core(func(ns *gitops.NsInstance) {
				ns.Params = map[string]any{"region": "eu1", "limits": map[string]any{"cpu": int64(2)}, "on": true}
			}),
			change: func(ns *osm.NSInstance, vnfs []osm.VNFInstance) []osm.VNFInstance {
				ns.AdditionalParamsForNs["region"] = "eu1"
				ns.AdditionalParamsForNs["limits"] = "!!yaml cpu: 2\n"
				ns.AdditionalParamsForNs["on"] = "true"
				return vnfs
			},
			last:  entry("core", "ns-1", unchanged, InstanceReady),
			state: InstanceReady,
		},
		{
			name:     "a deploy timeout changed after creation has nothing left to change",
			declared: core(func(ns *gitops.NsInstance) { ns.DeployTimeout = time.Hour }),
			last:     entry("core", "ns-1", unchanged, InstanceReady),
			state:    InstanceReady,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			record := running("ns-1", "core")
			record.NsdRef = "core_ns"
			record.Admin.ProjectsRead = []string{"project-1"}
			vnfs := coreRecords()
			if tc.change != nil {
				vnfs = tc.change(&record, vnfs)
			}
			o := newObserved(nil, nil, []osm.VIMAccount{{ID: "vim-1", Name: "site1"}}, []osm.NSInstance{record})
			if err := o.setVNFRecords(vnfs, tc.completed); err != nil {
				t.Fatal(err)
			}
			p := Plan{Owner: self}
			planExisting(Input{Observed: o, Owner: self, Force: tc.force}, &p, o.instance("ns-1"), tc.declared, tc.last,
				InstanceRecord{Name: "core", ID: "ns-1", Digest: tc.declared.Digest()})
			var upgrades, problems, deletes []string
			for _, d := range p.Deletes {
				deletes = append(deletes, d.Name+": "+d.Reason)
			}
			for _, u := range p.Upgrades {
				more := ""
				if u.MoreUpgrades {
					more = " (more follow)"
				}
				upgrades = append(upgrades, u.Member+"/"+u.KDU.Name+" "+tc.declared.ParamsJSON(u.Member, u.KDU)+" "+u.Chart+": "+u.Reason+more)
				if u.ID != "ns-1" || u.Name != "core" {
					t.Errorf("upgrade of %s@%s, want core@ns-1", u.Name, u.ID)
				}
			}
			for _, problem := range p.Problems {
				problems = append(problems, problem.String())
				if problem.Kind != Conflict {
					t.Errorf("problem kind %v, want Conflict", problem.Kind)
				}
			}
			if diff := cmp.Diff(tc.upgrades, upgrades); diff != "" {
				t.Errorf("upgrades (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.deletes, deletes); diff != "" {
				t.Errorf("deletes (-want +got):\n%s", diff)
			}
			if tc.problems == nil && (len(p.Inventory.NsInstances) != 1 || p.Inventory.NsInstances[0].State != tc.state) {
				t.Errorf("inventory %+v, want one entry %s", p.Inventory.NsInstances, tc.state)
			}
		})
	}
}

func TestChartsReplayTheCompletedUpgrades(t *testing.T) {
	vnfs := []osm.VNFInstance{{NSInstanceID: "ns-1", MemberVnfIndex: "vnf", KDURecords: []osm.KDURecord{
		{KDUName: "ldap", HelmChart: "bitnami/openldap:1.0.0"},
		{KDUName: "local", HelmChart: "openldap_knf/charts/openldap:1.0.0"},
	}}}
	for _, test := range []struct {
		name       string
		operations []osm.Operation
		want       string
	}{
		{"no upgrade: the record's chart", nil, "bitnami/openldap:1.0.0"},
		{"an upgrade's kdu_model", []osm.Operation{upgrade("ns-1", "ldap", "upgrade", 10, `{"kdu_model": "bitnami/openldap:2.0.0", "a": "1"}`)}, "bitnami/openldap:2.0.0"},
		{"an upgrade without kdu_model runs the deployed chart without its version", []osm.Operation{
			upgrade("ns-1", "ldap", "upgrade", 10, `{"kdu_model": "bitnami/openldap:2.0.0", "a": "1"}`),
			upgrade("ns-1", "ldap", "upgrade", 20, `{"a": "2"}`),
		}, "bitnami/openldap"},
		{"a rollback returns to the chart before", []osm.Operation{
			upgrade("ns-1", "ldap", "upgrade", 10, `{"kdu_model": "bitnami/openldap:2.0.0", "a": "1"}`),
			upgrade("ns-1", "ldap", "rollback", 20, ""),
		}, "bitnami/openldap:1.0.0"},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, models, err := kduReleases(vnfs, test.operations)
			if err != nil {
				t.Fatal(err)
			}
			if got := models["ns-1"]["vnf"]["ldap"]; got != test.want {
				t.Errorf("chart = %q, want %q", got, test.want)
			}
		})
	}
	_, models, err := kduReleases(vnfs, []osm.Operation{upgrade("ns-1", "local", "upgrade", 10, `{"a": "1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := models["ns-1"]["vnf"]["local"]; got != "openldap_knf/charts/openldap:1.0.0" {
		t.Errorf("a chart of the package keeps its name: %q", got)
	}
}
