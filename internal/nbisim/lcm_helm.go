package nbisim

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/Masterminds/semver/v3"
	yaml "go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// LCM runs a KDU primitive (LCM/osm_lcm/ns.py, action()) with n2vc's Helm
// connector (n2vc/k8s_helm_base_conn.py, k8s_helm3_conn.py) and writes
// nothing of the outcome into the VNF record: the kdur keeps the chart and
// the values it was instantiated with, and _admin.deployed.K8s[] its
// kdu-model. What Helm runs after upgrades and rollbacks is the release,
// which the simulator keeps per KDU so that State can show it.

// helmRelease is a deployed KDU's Helm release: its revisions, oldest
// first, each with the chart and the values (the release's config, what
// "helm get values" prints) it ran with. Revision n is revisions[n-1].
type helmRelease struct {
	revisions []helmRevision
}

// helmRevision is a revision of a release: the chart as LCM named it to
// Helm, the version Helm took from the repository's index ("" for a chart
// of a repository the catalog does not list), and the values.
type helmRevision struct {
	chart   string
	version string
	values  *python.Dict
}

// ChartCatalog is what the Helm repositories OSM knows hold, as their
// index.yaml says: by repository name, then chart name, the chart's
// versions (SemVer, as Helm requires).
type ChartCatalog map[string]map[string][]string

// DefaultChartCatalog is the repositories of the runs of OSM's real LCM
// (real-osm/charts, served to real Helm): stable with openldap 1.2.7 and
// 1.2.8, cetic with phpldapadmin 0.1.2, prometheus-community with
// prometheus-openldap-exporter 0.1.0. The demo repository and the tests
// name these.
func DefaultChartCatalog() ChartCatalog {
	return ChartCatalog{
		"stable":               {"openldap": {"1.2.7", "1.2.8"}},
		"cetic":                {"phpldapadmin": {"0.1.2"}},
		"prometheus-community": {"prometheus-openldap-exporter": {"0.1.0"}},
	}
}

// AddChart adds a "<repo>/<chart>:<version>" entry (the simulator's
// --chart flag) to the catalog.
func (c ChartCatalog) AddChart(entry string) error {
	ref := splitKDUModel(entry)
	if ref.repo == "" || ref.chart == "" || ref.version == "" || strings.Contains(ref.chart, "/") {
		return fmt.Errorf("chart %q: want <repo>/<chart>:<version>", entry)
	}
	if _, err := semver.NewVersion(ref.version); err != nil {
		return fmt.Errorf("chart %q: version %q is not SemVer, which Helm requires", entry, ref.version)
	}
	if c[ref.repo] == nil {
		c[ref.repo] = map[string][]string{}
	}
	if !slices.Contains(c[ref.repo][ref.chart], ref.version) {
		c[ref.repo][ref.chart] = append(c[ref.repo][ref.chart], ref.version)
	}
	return nil
}

// helmChartRef is a KDU model as LCM's Helm connector splits it
// (K8sHelmBaseConnector._split_version and _split_repo): model is what it
// names to Helm, the version goes to --version. A file of the package (two
// slashes or more) or a URL is neither split nor looked up in a repository.
type helmChartRef struct {
	model, repo, chart, version string
}

func splitKDUModel(model string) helmChartRef {
	u, err := url.Parse(model)
	if isURL := err == nil && u.Scheme != "" && u.Host != ""; isURL || strings.Count(model, "/") > 1 {
		return helmChartRef{model: model}
	}
	ref := helmChartRef{model: model}
	if parts := strings.Split(model, ":"); len(parts) == 2 {
		ref.model, ref.version = parts[0], parts[1]
	}
	ref.repo, ref.chart, _ = strings.Cut(ref.model, "/")
	if ref.chart == "" {
		ref.repo = ""
	}
	return ref
}

// lookUp is Helm's search of the repository's index for a chart
// (repo.IndexFile.Get, wrapped by ChartDownloader.ResolveChartVersion): the
// exact version, else the newest the version accepts as a constraint, ""
// accepting any but pre-releases. It returns the version Helm takes, "" for
// a chart outside the repositories the catalog lists.
func (c ChartCatalog) lookUp(ref helmChartRef) (string, error) {
	charts, listed := c[ref.repo]
	if ref.repo == "" || !listed {
		return "", nil
	}
	notFound := func(err error) error {
		return fmt.Errorf("chart %q matching %s not found in %s index. (try 'helm repo update'): %w", ref.chart, ref.version, ref.repo, err)
	}
	versions, found := charts[ref.chart]
	if !found {
		return "", notFound(errors.New("no chart name found"))
	}
	if slices.Contains(versions, ref.version) {
		return ref.version, nil
	}
	constraint, err := semver.NewConstraint(cmp.Or(ref.version, "*"))
	if err != nil {
		return "", notFound(err)
	}
	var newest *semver.Version
	for _, v := range versions {
		parsed, err := semver.NewVersion(v)
		if err == nil && constraint.Check(parsed) && (newest == nil || parsed.GreaterThan(newest)) {
			newest = parsed
		}
	}
	if newest == nil {
		return "", notFound(fmt.Errorf("no chart version found for %s-%s", ref.chart, ref.version))
	}
	return newest.Original(), nil
}

// installKDUs is LCM's deployment of an NS's KDUs (ns.py deploy_kdus and
// _install_kdu, K8sHelmBaseConnector._install_impl): each KDU's release is
// installed from its record's chart and values, and a chart or version its
// repository lacks fails the instantiate as it does on OSM (measured on
// OSM 19's LCM with real Helm, real-osm/README.md "Failures"): the
// operation FAILED with Helm's error, the kdur ERROR, the NS record's
// _admin.deployed.K8s written. KDUs before the failing one keep their
// releases.
func (s *Server) installKDUs(ns *nsRecord) *plannedFailure {
	var pending [][2]any
	for _, vnf := range ns.vnfs {
		for _, kdur := range vnf.fields.Kdur {
			if kdur.JujuBundle != "" {
				kdur.release = &helmRelease{revisions: []helmRevision{{chart: kdur.JujuBundle, values: valuesFileContent(kdur.params.Clone())}}}
				continue
			}
			ref := splitKDUModel(kdur.HelmChart)
			version, err := s.cfg.Charts.lookUp(ref)
			if err != nil {
				kdur.Status = "ERROR"
				ns.fields.Admin.Deployed = &deployedDoc{K8s: deployments(ns), VCA: []any{}}
				k8s := deployedKDU(ns, vnf, kdur)
				k8s.Status = ""
				paramsFile := ""
				if len(kdur.params.MembersOrNone()) > 0 {
					paramsFile = "-f " + lcmRandomDigits(ns.id, vnf.fields.MemberVnfIndexRef, kdur.KduName, "install") + ".yaml"
				}
				versionOption := ""
				if ref.version != "" {
					versionOption = "--version " + ref.version
				}
				command := fmt.Sprintf("env KUBECONFIG=%s %s install %s --atomic --output yaml  %s --timeout %ds --namespace %s   %s %s",
					kubeconfigPath(k8s), lcmHelmCommand, shellQuote(k8s.KduInstance), paramsFile, lcmHelmTimeoutSeconds,
					shellQuote(k8s.Namespace), shellQuote(ref.model), versionOption)
				detail := fmt.Sprintf("Deploying KDU %s: Error executing command: %s\nOutput: Error: INSTALLATION FAILED: %v", kdur.KduName, command, err)
				return &plannedFailure{state: stateFailed, message: detail,
					errorMessage: lcmSteps[opInstantiate].stage + " Detail: " + detail}
			}
			kdur.release = &helmRelease{revisions: []helmRevision{{chart: kdur.HelmChart, version: version, values: valuesFileContent(kdur.params.Clone())}}}
			pending = append(pending, [2]any{vnf, kdur})
		}
	}
	ns.fields.Admin.Deployed = &deployedDoc{K8s: deployments(ns), VCA: []any{}}
	for _, installed := range pending {
		vnf, kdur := installed[0].(*vnfRecord), installed[1].(*kdurDoc)
		writeHelmStatus(deployedKDU(ns, vnf, kdur), kdur.release, "install", "Install complete")
	}
	return nil
}

// writeHelmStatus writes what LCM's Helm connector stores of a release after an operation
// (_store_status): the operation, the description as status, and the release's status as
// detailed-status. The manifest is one Deployment labelled as charts made with "helm create"
// label their objects (helm.sh/chart: <chart>-<version>), as the charts of real-osm/ do.
func writeHelmStatus(deployed *k8sDeploymentDoc, release *helmRelease, operation, description string) {
	current := release.current()
	name := deployed.KduInstance
	ref := splitKDUModel(current.chart)
	chart := cmp.Or(ref.chart, strings.TrimSuffix(path.Base(ref.model), ".tgz"))
	labels := python.NewDict("app.kubernetes.io/instance", name, "app.kubernetes.io/name", chart)
	if current.version != "" {
		labels.Set("helm.sh/chart", chart+"-"+current.version)
	}
	manifest := []any{python.NewDict("apiVersion", "apps/v1", "kind", "Deployment", "metadata", python.NewDict("name", name, "labels", labels))}
	status := python.NewDict(
		"config", current.values.Clone(),
		"info", python.NewDict("deleted", "", "description", description, "status", "deployed"),
		"manifest", manifest, "name", name, "namespace", deployed.Namespace,
		"version", json.Number(fmt.Sprint(len(release.revisions))))
	deployed.Status, deployed.Operation, deployed.DetailedStatus = description, operation, python.Repr(status)
}

// kduInstanceName is the name LCM gives a KDU's release (ns.py
// _install_kdu): its kdu-deployment-name, else the connector's
// generate_kdu_instance_name of its model: for Helm, the chart (the last
// part of a file or URL) with each character that is neither a letter nor
// a digit made "-", cut to 35 characters, "a" before it unless it starts
// with a letter, then "-" and a random number of ten digits (1 to
// 99999999, zero-padded), all lower case: stable-openldap-1-2-7-0084363360;
// for Juju, "<kdu name>-<NS id>". The simulator derives the number from the
// ids, so that runs repeat.
func kduInstanceName(ns *nsRecord, vnf *vnfRecord, kdur *kdurDoc) string {
	if kdur.KduDeploymentName != "" {
		return kdur.KduDeploymentName
	}
	if kdur.JujuBundle != "" {
		return kdur.KduName + "-" + ns.id
	}
	chart := kdur.HelmChart
	if strings.HasPrefix(chart, "/") || strings.Contains(chart, "://") {
		chart = chart[strings.LastIndex(chart, "/")+1:]
	}
	var name []rune
	for _, r := range chart {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			name = append(name, r)
		} else {
			name = append(name, '-')
		}
	}
	name = name[:min(len(name), 35)]
	if len(name) == 0 || !unicode.IsLetter(name[0]) {
		name = append([]rune{'a'}, name...)
	}
	return strings.ToLower(string(name) + "-" + lcmRandomDigits(ns.id, vnf.fields.MemberVnfIndexRef, kdur.KduName))
}

// lcmRandomDigits stands for the get_random_number of LCM's Helm connector
// (a number from 1 to 99999999, zero-padded to ten digits), derived from
// the parts so that runs repeat.
func lcmRandomDigits(parts ...string) string {
	hash := fnv.New64a()
	_, _ = hash.Write([]byte(strings.Join(parts, "/")))
	return fmt.Sprintf("%010d", 1+hash.Sum64()%99_999_999)
}

func kubeconfigPath(deployed *k8sDeploymentDoc) string {
	return lcmStoragePath + deployed.K8sClusterUUID + "/.kube/config"
}

func kduModel(kdur *kdurDoc) string { return firstNonEmpty(kdur.HelmChart, kdur.JujuBundle) }

func (r *helmRelease) current() helmRevision { return r.revisions[len(r.revisions)-1] }

// The options of an upgrade that LCM reads from its primitive_params.
const (
	paramKDUModel                = "kdu_model"
	paramKDUAtomicUpgrade        = "kdu_atomic_upgrade"
	paramKDUResetValues          = "kdu_reset_values"
	paramKDUReuseValues          = "kdu_reuse_values"
	paramKDUResetThenReuseValues = "kdu_reset_then_reuse_values"
)

// kduActionOutcome is how LCM ends an action on a KDU: failed with an
// error message, or completed with a detailed-status (the new revision of
// the release for an upgrade or a rollback).
type kduActionOutcome struct {
	failure        string
	detailedStatus any
}

// runKDUAction plays LCM's action() for a KDU primitive and changes the
// KDU's release the way Helm would; it changes nothing when LCM fails.
func runKDUAction(ns *nsRecord, target *actionTarget, charts ChartCatalog) kduActionOutcome {
	vnf, kdur := target.vnf, target.kdu
	switch target.primitive {
	case "upgrade", "rollback", "status":
	default:
		return kduActionOutcome{detailedStatus: "Done"} // a primitive of the descriptor
	}
	deployed := deployedKDU(ns, vnf, kdur)
	if deployed != nil && kdur.release == nil && target.primitive == "upgrade" {
		// A KDU whose install failed: K8sHelmBaseConnector.upgrade finds no release.
		return kduActionOutcome{failure: fmt.Sprintf("FAILED Executing kdu upgrade: kdu_instance %s not found", deployed.KduInstance)}
	}
	if deployed == nil || kdur.release == nil {
		// No step is set between reading the VNFD and this check.
		return kduActionOutcome{failure: fmt.Sprintf("FAILED Getting vnfd from database: KDU '%s' for vnf '%s' not deployed",
			kdur.KduName, vnf.fields.MemberVnfIndexRef)}
	}
	var outcome kduActionOutcome
	switch target.primitive {
	case "upgrade":
		outcome = upgradeKDU(deployed, kdur, target.params, charts)
		deployed.Operation = "upgrade" // written before Helm runs: a failed upgrade leaves it
		if outcome.failure == "" {
			writeHelmStatus(deployed, kdur.release, "upgrade", "Upgrade complete")
		}
	case "rollback":
		outcome = rollbackKDU(deployed, kdur)
		if outcome.failure == "" {
			writeHelmStatus(deployed, kdur.release, "rollback", fmt.Sprintf("Rollback to %d", len(kdur.release.revisions)-2))
		}
	default:
		outcome = kduActionOutcome{detailedStatus: "Done"}
	}
	return outcome
}

func deployedKDU(ns *nsRecord, vnf *vnfRecord, kdur *kdurDoc) *k8sDeploymentDoc {
	if ns.fields.Admin.Deployed == nil {
		return nil
	}
	for i := range ns.fields.Admin.Deployed.K8s {
		k8s := &ns.fields.Admin.Deployed.K8s[i]
		if k8s.KduName == kdur.KduName && k8s.MemberVnfIndex == vnf.fields.MemberVnfIndexRef {
			return k8s
		}
	}
	return nil
}

// upgradeKDU is the upgrade branch of action() ("if primitive_name ==
// "upgrade" and primitive_params:") and K8sHelmBaseConnector.upgrade.
// Without kdu_model, LCM names the deployed chart without its version and
// Helm takes the newest of the repository (measured on OSM 19's LCM: 1.2.7
// became 1.2.8 on a values change); a chart or version the repository
// lacks fails the upgrade and leaves the release as it was.
func upgradeKDU(deployed *k8sDeploymentDoc, kdur *kdurDoc, primitiveParams *python.Dict, charts ChartCatalog) kduActionOutcome {
	params := primitiveParams.Clone()
	if params == nil || len(params.Members) == 0 {
		// With no params the upgrade misses its branch and falls to the one
		// of the other primitives, which maps the params of a descriptor
		// primitive there is none of.
		return kduActionOutcome{failure: lcmFailure("Executing kdu upgrade", emptyUpgradeFrames, "AttributeError: 'NoneType' object has no attribute 'get'")}
	}
	model := deployed.KduModel
	if value, _ := params.Get(paramKDUModel); pythonTruthy(value) {
		params.Del(paramKDUModel)
		model = fmt.Sprint(value)
		if s, isString := value.(string); isString {
			model = s
		}
	} else if strings.Count(model, "/") < 2 { // the chart is not embedded: drop the version
		if parts := strings.Split(model, ":"); len(parts) == 2 {
			model = parts[0]
		}
	}
	atomic := true
	if value, _ := params.Get(paramKDUAtomicUpgrade); pythonTruthy(value) {
		var err string
		if atomic, err = lcmYes(value, atomicUpgradeFrame); err != "" {
			return kduActionOutcome{failure: err}
		}
		params.Del(paramKDUAtomicUpgrade)
	}
	var reset, reuse, resetThenReuse bool
	_, hasReset := params.Get(paramKDUResetValues)
	_, hasReuse := params.Get(paramKDUReuseValues)
	_, hasResetThenReuse := params.Get(paramKDUResetThenReuseValues)
	if !hasReset && !hasReuse && !hasResetThenReuse {
		reuse = true
	} else {
		// LCM pops kdu_reset_values and kdu_reuse_values but only reads
		// kdu_reset_then_reuse_values, which Helm then gets as a value.
		for _, option := range []struct {
			key   string
			into  *bool
			pop   bool
			frame lcmFrame
		}{
			{paramKDUResetValues, &reset, true, resetValuesFrame},
			{paramKDUReuseValues, &reuse, true, reuseValuesFrame},
			{paramKDUResetThenReuseValues, &resetThenReuse, false, resetThenReuseValuesFrame},
		} {
			value, _ := params.Get(option.key)
			if !pythonTruthy(value) {
				continue
			}
			if option.pop {
				params.Del(option.key)
			}
			yes, err := lcmYes(value, option.frame)
			if err != "" {
				return kduActionOutcome{failure: err}
			}
			*option.into = yes
		}
		if countTrue(reset, reuse, resetThenReuse) >= 2 {
			return kduActionOutcome{failure: "FAILED Executing kdu upgrade: Cannot upgrade the KDU simultaneously with two true options to handle values"}
		}
	}
	// The values LCM passes: the upgrade's params alone with
	// kdu_reset_values, else the VNF record's values (parse_yaml_strings of
	// kdur.additionalParams) updated with them, a shallow update.
	sent := params
	if !reset {
		sent = kdur.params.Clone()
		if sent == nil {
			sent = &python.Dict{}
		}
		for _, m := range params.Members {
			sent.Set(m.Key, m.Value)
		}
	}
	ref := splitKDUModel(model)
	version, err := charts.lookUp(ref)
	if err != nil {
		return kduActionOutcome{failure: "FAILED Executing kdu upgrade: " +
			helmUpgradeFailure(deployed, ref, len(sent.Members) > 0, atomic, reset, reuse, resetThenReuse, err)}
	}
	values := valuesFileContent(sent)
	release := kdur.release
	if !reset {
		// --reuse-values (also LCM's choice when no option is true) and
		// --reset-then-reuse-values both merge the new values over the
		// release's: Helm's chartutil.CoalesceTables.
		values = coalesceTables(values, release.current().values.Clone())
	}
	release.revisions = append(release.revisions, helmRevision{chart: model, version: version, values: values})
	return kduActionOutcome{detailedStatus: json.Number(fmt.Sprint(len(release.revisions)))}
}

// helmUpgradeFailure is the K8sException of K8sHelmBaseConnector.upgrade
// when Helm refuses the chart: the command (k8s_helm3_conn.py
// _get_upgrade_command) and Helm's output.
func helmUpgradeFailure(deployed *k8sDeploymentDoc, ref helmChartRef, withValues, atomic, reset, reuse, resetThenReuse bool, helmErr error) string {
	atomicOption, paramsFile, versionOption := "", "", ""
	if atomic {
		atomicOption = "--atomic"
	}
	if withValues {
		paramsFile = "-f " + lcmRandomDigits(deployed.KduInstance, "upgrade") + ".yaml"
	}
	if ref.version != "" {
		versionOption = "--version " + shellQuote(ref.version)
	}
	onValues := "--reuse-values"
	switch {
	case reset:
		onValues = "--reset-values"
	case reuse:
	case resetThenReuse:
		onValues = "--reset-then-reuse-values"
	}
	command := fmt.Sprintf("env KUBECONFIG=%s %s upgrade %s %s --namespace %s %s --output yaml %s --timeout %ds   %s %s",
		kubeconfigPath(deployed), lcmHelmCommand, shellQuote(deployed.KduInstance), shellQuote(ref.model), shellQuote(deployed.Namespace),
		atomicOption, paramsFile, lcmHelmTimeoutSeconds, onValues, versionOption)
	return fmt.Sprintf("Error executing command: %s\nOutput: Error: %v", command, helmErr)
}

// rollbackKDU is K8sHelmBaseConnector.rollback: "helm rollback <release>
// 0", which Helm reads as the revision before the current one, and makes a
// new revision with that one's chart and values.
func rollbackKDU(deployed *k8sDeploymentDoc, kdur *kdurDoc) kduActionOutcome {
	release := kdur.release
	previous := len(release.revisions) - 1
	if previous < 1 {
		command := fmt.Sprintf("env KUBECONFIG=%s%s/.kube/config %s rollback %s 0 --namespace=%s --wait",
			lcmStoragePath, deployed.K8sClusterUUID, lcmHelmCommand, shellQuote(deployed.KduInstance), shellQuote(deployed.Namespace))
		// K8sHelmBaseConnector.rollback's K8sException, with Helm's error.
		return kduActionOutcome{failure: fmt.Sprintf("FAILED Executing kdu rollback: Error executing command: %s\nOutput: Error: release has no %d version",
			command, previous)}
	}
	back := release.revisions[previous-1]
	release.revisions = append(release.revisions, helmRevision{chart: back.chart, version: back.version, values: back.values.Clone()})
	return kduActionOutcome{detailedStatus: json.Number(fmt.Sprint(len(release.revisions)))}
}

// Where LCM's container keeps its files and Helm (LCM's Dockerfile:
// /app/storage, OSMLCM_VCA_HELMPATH=/usr/local/bin/helm3), and the
// --timeout of its Helm installs and upgrades (1800 s whatever the NS's
// deploy timeout, as measured on OSM 19's LCM).
const (
	lcmStoragePath        = "/app/storage/"
	lcmHelmCommand        = "/usr/local/bin/helm3"
	lcmHelmTimeoutSeconds = 1800
)

// shellQuote is Python's shlex.quote.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

func countTrue(flags ...bool) int {
	n := 0
	for _, flag := range flags {
		if flag {
			n++
		}
	}
	return n
}

// pythonTruthy is Python's truth of a JSON value.
func pythonTruthy(v any) bool {
	switch value := v.(type) {
	case nil:
		return false
	case bool:
		return value
	case string:
		return value != ""
	case json.Number:
		f, err := value.Float64()
		return err != nil || f != 0
	case []any:
		return len(value) > 0
	case *python.Dict:
		return len(value.Members) > 0
	}
	return true
}

// lcmYes is LCM's value.lower() in ("yes", "true", "1"); a value that is
// not a string has no lower() and fails the operation.
func lcmYes(value any, frame lcmFrame) (bool, string) {
	s, isString := value.(string)
	if !isString {
		return false, lcmFailure("Executing kdu upgrade", []lcmFrame{frame},
			fmt.Sprintf("AttributeError: '%s' object has no attribute 'lower'", python.TypeName(value)))
	}
	switch strings.ToLower(s) {
	case "yes", "true", "1":
		return true, ""
	}
	return false, ""
}

// lcmFrame is a frame of a Python traceback in LCM's ns.py: its line and
// function and the source line Python shows.
type lcmFrame struct {
	line     int
	function string
	source   string
}

// lcmSourceFile is ns.py where LCM's image installs it (LCM's Dockerfile:
// a Python 3.10 venv in /app/.venv).
const lcmSourceFile = "/app/.venv/lib/python3.10/site-packages/osm_lcm/ns.py"

// The frames of the unexpected exceptions an upgrade can meet, with the
// line numbers of LCM's ns.py (release 19). Python 3.10 shows the line of
// the attribute a multi-line call fails on.
var (
	emptyUpgradeFrames = []lcmFrame{
		{5410, "action", "params = self._map_primitive_params("},
		{4927, "_map_primitive_params", `for parameter in primitive_desc.Get("parameter", ()):`},
	}
	atomicUpgradeFrame        = lcmFrame{5328, "action", `).lower() in ("yes", "true", "1")`}
	resetValuesFrame          = lcmFrame{5348, "action", `).lower() in ("yes", "true", "1")`}
	reuseValuesFrame          = lcmFrame{5352, "action", `).lower() in ("yes", "true", "1")`}
	resetThenReuseValuesFrame = lcmFrame{5356, "action", `).lower() in ("yes", "true", "1")`}
)

// lcmFailure is the error message action() writes for an exception it does
// not expect: "FAILED <step>: " and traceback.format_exc().
func lcmFailure(step string, frames []lcmFrame, exception string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "FAILED %s: Traceback (most recent call last):\n", step)
	for _, frame := range frames {
		fmt.Fprintf(&b, "  File %q, line %d, in %s\n    %s\n", lcmSourceFile, frame.line, frame.function, frame.source)
	}
	b.WriteString(exception + "\n")
	return b.String()
}

// valuesFileContent is what Helm reads from the values file LCM writes
// (K8sHelmBaseConnector._params_to_file_option): the params, with a string
// that holds "!!yaml" read as the YAML after its first seven characters.
func valuesFileContent(params *python.Dict) *python.Dict {
	values := &python.Dict{}
	for _, m := range params.MembersOrNone() {
		value := m.Value
		if s, isString := value.(string); isString && strings.Contains(s, "!!yaml") {
			runes := []rune(s)
			var node yaml.Node
			if len(runes) >= 7 && yaml.Unmarshal([]byte(string(runes[7:])), &node) == nil {
				if decoded, err := python.FromYAML(&node); err == nil {
					value = jsonCompatible(decoded)
				}
			}
		}
		values.Set(m.Key, value)
	}
	return values
}

// jsonCompatible turns the numbers python.FromYAML makes into json.Number, as
// the values of a request hold them.
func jsonCompatible(v any) any {
	switch value := v.(type) {
	case *python.Dict:
		for i := range value.Members {
			value.Members[i].Value = jsonCompatible(value.Members[i].Value)
		}
		return value
	case []any:
		for i := range value {
			value[i] = jsonCompatible(value[i])
		}
		return value
	case int:
		return json.Number(fmt.Sprint(value))
	case int64:
		return json.Number(fmt.Sprint(value))
	case uint64:
		return json.Number(fmt.Sprint(value))
	case float64:
		return json.Number(python.FloatDumps(value))
	}
	return v
}

// coalesceTables is Helm's chartutil.CoalesceTables(dst, src) as an
// upgrade with --reuse-values calls it with the new values and the
// release's: a key of src missing from dst is added, tables present in
// both merge key by key, dst's other values win, and a null in dst removes
// the key src has.
func coalesceTables(dst, src *python.Dict) *python.Dict {
	if src == nil {
		return dst
	}
	if dst == nil {
		return src
	}
	for _, m := range src.Members {
		dv, found := dst.Get(m.Key)
		srcTable, srcIsTable := m.Value.(*python.Dict)
		dstTable, dstIsTable := dv.(*python.Dict)
		switch {
		case found && dv == nil:
			dst.Del(m.Key)
		case !found:
			dst.Set(m.Key, m.Value)
		case srcIsTable && dstIsTable:
			coalesceTables(dstTable, srcTable)
		}
	}
	return dst
}
