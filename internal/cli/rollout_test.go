package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

const (
	firstRevision  = "main@sha1:9a8b7c6d5e4f30211203948576afbecd01234567"
	secondRevision = "main@sha1:3f1c0a2b9d8e7f60514a3b2c1d0e9f8a7b6c5d4e"
)

// rolloutNow is the time the rollout fixtures are seen at.
var rolloutNow = time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)

// after is a dependsOn entry: revision Same with bake, or Any when bake is negative.
func after(name string, bake time.Duration) gitopsv1alpha1.DependencyReference {
	if bake < 0 {
		return gitopsv1alpha1.DependencyReference{Name: name, Revision: gitopsv1alpha1.DependencyRevisionAny}
	}
	ref := gitopsv1alpha1.DependencyReference{Name: name, Revision: gitopsv1alpha1.DependencyRevisionSame}
	if bake > 0 {
		ref.BakeTime = &metav1.Duration{Duration: bake}
	}
	return ref
}

// siteOf is an OsmDeployment of namespace telco running runs, with its conditions ("Type
// Status Reason" each), the dependsOn entries and the rollout status given.
func siteOf(name, runs, attempted string, rollout *gitopsv1alpha1.RolloutStatus, conds []string, deps ...gitopsv1alpha1.DependencyReference) gitopsv1alpha1.OsmDeployment {
	d := gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "telco", Name: name},
		Spec:   gitopsv1alpha1.OsmDeploymentSpec{DependsOn: deps},
		Status: gitopsv1alpha1.OsmDeploymentStatus{LastAppliedRevision: runs, LastAttemptedRevision: attempted, Rollout: rollout}}
	for _, c := range conds {
		f := strings.SplitN(c, " ", 3)
		d.Status.Conditions = append(d.Status.Conditions, metav1.Condition{Type: f[0], Status: metav1.ConditionStatus(f[1]), Reason: f[2], Message: f[2] + " message"})
	}
	return d
}

func held(dependency string, phase gitopsv1alpha1.RolloutPhase, bakedAt time.Duration) *gitopsv1alpha1.RolloutStatus {
	r := &gitopsv1alpha1.RolloutStatus{Revision: secondRevision, Dependency: dependency, Phase: phase}
	if bakedAt != 0 {
		r.BakedAt = &metav1.Time{Time: rolloutNow.Add(bakedAt)}
	}
	return r
}

var (
	applied    = []string{"Ready True Applied", "Healthy True Succeeded"}
	waiting    = []string{"Reconciling True WaitingForWave", "Ready False WaitingForWave", "Healthy True Succeeded"}
	haltedSite = []string{"Stalled True RolloutHalted", "Ready False RolloutHalted", "Healthy True Succeeded"}
)

func TestRenderRollout(t *testing.T) {
	for _, test := range []struct {
		name  string
		sites []gitopsv1alpha1.OsmDeployment
		want  string
	}{
		{"a wave bakes, the next waits for it", []gitopsv1alpha1.OsmDeployment{
			siteOf("region-a", firstRevision, firstRevision, held("canary", gitopsv1alpha1.RolloutWaiting, 0), waiting,
				after("canary", 2*time.Hour), after("db", -1)),
			siteOf("canary", firstRevision, firstRevision, held("lab", gitopsv1alpha1.RolloutBaking, 12*time.Minute+4*time.Second), waiting,
				after("lab", 30*time.Minute)),
			siteOf("lab", secondRevision, secondRevision, nil, applied),
			siteOf("monitoring", secondRevision, secondRevision, nil, applied, after("lab", -1)),
		}, lines(
			"WAVE  SITE              RUNS          TARGET        STATE    WAITS ON                          READY  HEALTHY  AFTER",
			"1     telco/lab         main@3f1c0a2  main@3f1c0a2  Applied  -                                 True   True     -",
			"1     telco/monitoring  main@3f1c0a2  main@3f1c0a2  Applied  -                                 True   True     telco/lab (Any)",
			"2     telco/canary      main@9a8b7c6  main@3f1c0a2  Baking   telco/lab: bake time, 12m4s left  False  True     telco/lab (Same, bake 30m0s)",
			"3     telco/region-a    main@9a8b7c6  main@3f1c0a2  Waiting  telco/canary: its wave (Baking)   False  True     telco/canary (Same, bake 2h0m0s), telco/db (Any, not listed)",
		)},
		{"the canary failed its health check: the regions halt", []gitopsv1alpha1.OsmDeployment{
			siteOf("lab", secondRevision, secondRevision, nil, applied),
			siteOf("canary", secondRevision, secondRevision, nil, []string{"Stalled True HealthCheckFailed", "Ready False HealthCheckFailed", "Healthy False HealthCheckFailed"},
				after("lab", 0)),
			siteOf("region-a", firstRevision, firstRevision, held("canary", gitopsv1alpha1.RolloutHalted, 0), haltedSite, after("canary", 0)),
			siteOf("edge", firstRevision, firstRevision, held("region-a", gitopsv1alpha1.RolloutHalted, 0), haltedSite, after("region-a", 0)),
		}, lines(
			"WAVE  SITE            RUNS          TARGET        STATE    WAITS ON                                                      READY  HEALTHY  AFTER",
			"1     telco/lab       main@3f1c0a2  main@3f1c0a2  Applied  -                                                             True   True     -",
			"2     telco/canary    main@3f1c0a2  main@3f1c0a2  Failed   HealthCheckFailed                                             False  False    telco/lab (Same)",
			"3     telco/region-a  main@9a8b7c6  main@3f1c0a2  Halted   halted: telco/canary failed main@3f1c0a2 (HealthCheckFailed)  False  True     telco/canary (Same)",
			"4     telco/edge      main@9a8b7c6  main@3f1c0a2  Halted   halted: telco/canary failed main@3f1c0a2 (HealthCheckFailed)  False  True     telco/region-a (Same)",
		)},
		{"the lab applies; a cycle", []gitopsv1alpha1.OsmDeployment{
			siteOf("lab", firstRevision, secondRevision, nil, []string{"Reconciling True Progressing", "Ready Unknown Progressing"}),
			siteOf("canary", firstRevision, firstRevision, held("lab", gitopsv1alpha1.RolloutWaiting, 0), waiting, after("lab", 0)),
			siteOf("x", "", "", nil, nil, after("y", 0)),
			siteOf("y", "", "", nil, nil, after("x", 0)),
		}, lines(
			"WAVE   SITE          RUNS          TARGET        STATE     WAITS ON                          READY    HEALTHY  AFTER",
			"1      telco/lab     main@9a8b7c6  main@3f1c0a2  Applying  -                                 Unknown  Unknown  -",
			"2      telco/canary  main@9a8b7c6  main@3f1c0a2  Waiting   telco/lab: applying main@3f1c0a2  False    True     telco/lab (Same)",
			"cycle  telco/x       -             -             NotReady  -                                 Unknown  Unknown  telco/y (Same)",
			"cycle  telco/y       -             -             NotReady  -                                 Unknown  Unknown  telco/x (Same)",
		)},
		{"a health check to pass, a revision not attempted, a dependency missing", []gitopsv1alpha1.OsmDeployment{
			siteOf("lab", secondRevision, secondRevision, nil, []string{"Reconciling True Progressing", "Ready Unknown Progressing", "Healthy Unknown Progressing"}),
			siteOf("canary", firstRevision, firstRevision, held("lab", gitopsv1alpha1.RolloutWaiting, 0), waiting, after("lab", 0)),
			siteOf("staging", firstRevision, firstRevision, nil, applied),
			siteOf("region-a", firstRevision, firstRevision, held("staging", gitopsv1alpha1.RolloutWaiting, 0), waiting, after("staging", 0)),
			siteOf("region-b", firstRevision, firstRevision, held("edge/gone", gitopsv1alpha1.RolloutWaiting, 0), waiting,
				gitopsv1alpha1.DependencyReference{Name: "gone", Namespace: "edge", Revision: gitopsv1alpha1.DependencyRevisionSame}),
			siteOf("region-c", firstRevision, firstRevision, held("edge/gone", gitopsv1alpha1.RolloutHalted, 0), haltedSite,
				gitopsv1alpha1.DependencyReference{Name: "gone", Namespace: "edge", Revision: gitopsv1alpha1.DependencyRevisionSame}),
		}, lines(
			"WAVE  SITE            RUNS          TARGET        STATE     WAITS ON                                                       READY    HEALTHY  AFTER",
			"1     telco/lab       main@3f1c0a2  main@3f1c0a2  Applying  -                                                              Unknown  Unknown  -",
			"1     telco/region-b  main@9a8b7c6  main@3f1c0a2  Waiting   edge/gone: not listed (another namespace without -A, or none)  False    True     edge/gone (Same, not listed)",
			"1     telco/region-c  main@9a8b7c6  main@3f1c0a2  Halted    halted: edge/gone failed main@3f1c0a2 (not listed)             False    True     edge/gone (Same, not listed)",
			"1     telco/staging   main@9a8b7c6  main@9a8b7c6  Applied   -                                                              True     True     -",
			"2     telco/canary    main@9a8b7c6  main@3f1c0a2  Waiting   telco/lab: health check                                        False    True     telco/lab (Same)",
			"2     telco/region-a  main@9a8b7c6  main@3f1c0a2  Waiting   telco/staging: main@3f1c0a2 not attempted yet                  False    True     telco/staging (Same)",
		)},
	} {
		t.Run(test.name, func(t *testing.T) {
			var out strings.Builder
			RenderRollout(&out, BuildRollout(test.sites, rolloutNow))
			if diff := cmp.Diff(test.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// A revision or a message from the cluster cannot act on the terminal, nor on a tool reading
// the JSON: its control characters are escaped in both.
func TestRolloutEscapesControlCharacters(t *testing.T) {
	const hostile = "main@sha1:1\x1b[2K\r✔ forged\u202e"
	d := siteOf("lab", hostile, hostile, &gitopsv1alpha1.RolloutStatus{Revision: hostile, Dependency: "x\x1b[1A", Phase: gitopsv1alpha1.RolloutWaiting},
		[]string{"Ready False " + hostile})
	sites := BuildRollout([]gitopsv1alpha1.OsmDeployment{d}, rolloutNow)
	var out strings.Builder
	RenderRollout(&out, sites)
	data, err := json.Marshal(sites)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []RolloutSite
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	text := out.String() + strings.Join([]string{decoded[0].Runs, decoded[0].Target, decoded[0].WaitsOn, decoded[0].Reason, decoded[0].Message}, "\n")
	if strings.ContainsFunc(text, func(r rune) bool { return r == 0x1b || r == '\r' || r == '\u202e' }) {
		t.Errorf("raw control character in:\n%q", text)
	}
}

// The command reads the OsmDeployments of a cluster, and writes nothing to it.
func TestRolloutOfACluster(t *testing.T) {
	ctx := context.Background()
	c, kubeconfig := startCluster(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "telco"}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []gitopsv1alpha1.OsmDeployment{
		siteOf("lab", secondRevision, secondRevision, nil, applied),
		siteOf("canary", firstRevision, firstRevision, held("lab", gitopsv1alpha1.RolloutBaking, time.Hour), waiting, after("lab", 2*time.Hour)),
	} {
		obj := osmtenant.Deployment(s.Namespace, s.Name, "osm-gitops")
		obj.Spec.DependsOn = s.Spec.DependsOn
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		obj.Status = s.Status
		if obj.Status.Rollout != nil {
			obj.Status.Rollout.BakedAt = &metav1.Time{Time: time.Now().Add(time.Hour)} // the command reads the bake time left at its now
		}
		for i := range obj.Status.Conditions {
			obj.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
		if err := c.Status().Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var before gitopsv1alpha1.OsmDeploymentList
	if err := c.List(ctx, &before); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := run(t, "rollout", "-n", "telco", "--kubeconfig", kubeconfig)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	rows := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[1], "1     telco/lab ") || !strings.HasPrefix(rows[2], "2     telco/canary ") ||
		!strings.Contains(rows[2], "Baking   telco/lab: bake time, ") {
		t.Errorf("rollout:\n%s", stdout)
	}

	code, stdout, stderr = run(t, "rollout", "-A", "-o", "json", "--kubeconfig", kubeconfig)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var sites []RolloutSite
	if err := json.Unmarshal([]byte(stdout), &sites); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if len(sites) != 2 || sites[1].Site != "telco/canary" || sites[1].Wave != 2 || sites[1].State != StateBaking ||
		sites[1].WaitsOn != "telco/lab" || sites[1].Target != secondRevision || sites[1].BakedAt == nil {
		t.Errorf("rollout -o json:\n%s", stdout)
	}

	var after gitopsv1alpha1.OsmDeploymentList
	if err := c.List(ctx, &after); err != nil {
		t.Fatal(err)
	}
	for i := range before.Items {
		if before.Items[i].ResourceVersion != after.Items[i].ResourceVersion {
			t.Errorf("OsmDeployment %s was written", before.Items[i].Name)
		}
	}
	if code, _, _ := run(t, "rollout", "-o", "yaml", "--kubeconfig", kubeconfig); code != ExitError {
		t.Errorf("-o yaml: exit %d, want %d", code, ExitError)
	}
}
