package gitops

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/osmops/osmops/internal/kduoptions"
)

// KindNsInstance is the only kind a deployment file may declare.
const KindNsInstance = "NsInstance"

// maxNSNameLength bounds an NS instance name, in characters.
const maxNSNameLength = 255

// MaxNsInstances bounds the NS instances one revision declares: the status of the OsmDeployment
// that applies it lists each (its inventory entry and its running operation), and must stay
// well under what the API server stores of an object (1.5 MiB) with the longest names and
// reasons (TestWorstCaseStatusFitsTheAPIServer in internal/controller). It is twice OSM's own
// default quota of NS instances per project (500).
const MaxNsInstances = 1000

// checkInstanceCount refuses a revision of more than MaxNsInstances NS instances, naming the
// scanned folder.
func checkInstanceCount(folder string, count int) *Problem {
	if count <= MaxNsInstances {
		return nil
	}
	problem := problemf(folder, 0, "declares %d NS instances, more than the limit of %d per OsmDeployment: spread them over several OsmDeployments",
		count, MaxNsInstances)
	return &problem
}

// osmForbiddenNameChars are the characters OSM's name schema (^[^,;()'"]+$) refuses.
const osmForbiddenNameChars = `,;()'"`

// NsInstance is the NS instance that one deployment file declares: the OSM
// cluster must run an instance Name of NSD NsdName on VIM account
// VimAccountName, whose KDUs run with the declared values and charts. A file
// declares its KDUs in one of two forms: the short one (VnfName and KDU, one
// KDU of one VNF) or the full one (VNFs); Members gives either as the full one.
type NsInstance struct {
	// Name is the NS instance name; unique in a revision.
	Name string
	// Description is optional (OSM's nsDescription).
	Description string
	// NsdName is the NSD's descriptor id.
	NsdName string
	// VnfName is a vnf-profile id (member-vnf-index) of the NSD: the short form.
	VnfName string
	// VimAccountName is the VIM account's name.
	VimAccountName string
	// KDU is the KDU to run and its Helm values: the short form.
	KDU KDU
	// VNFs are the VNFs and KDUs of the full form (vnfs), nil in the short form.
	VNFs []VNF
	// Params are the NS-level parameters (OSM's additionalParamsForNs), nil when none.
	Params map[string]any
	// K8sNamespace is the Kubernetes namespace of every KDU (OSM's k8s-namespace), unless a VNF
	// or KDU names its own; "" for OSM's default, the project's id.
	K8sNamespace string
	// DeployTimeout bounds the instantiation (OSM's timeout_ns_deploy, whole seconds); 0 for
	// OSM's default.
	DeployTimeout time.Duration
	// Source says where the instance is declared.
	Source SourceRef
	// Origins are where the declaration came from (see Origin); they are not part of Digest.
	Origins []Origin

	// digestKey, when the instance's definition holds what Secrets hold (values from a Secret,
	// variables substituted from one), keys its Digest: see Digest.
	digestKey []byte

	// sealed holds the JSON forms and Digest computed once (see Sealed): a plan compares every
	// instance of a revision, and encoding them each time was most of its cost.
	sealed *sealedForms
}

type sealedForms struct {
	// paramsJSON are the KDUs' canonical values, in the order of members: a short list, read
	// without hashing (a plan of 10,000 instances looked each up in a map of its own), held in
	// firstParams for an instance of one KDU, the most common, so that reading it reads no
	// other allocation.
	paramsJSON  []sealedParams
	firstParams [1]sealedParams
	digest      string
	// members are what Members returns, made once.
	members []VNF
}

// Sealed returns the instance with its JSON forms and Digest computed once, as Load returns
// instances; changes made to its fields afterwards are not seen by them.
func (n NsInstance) Sealed() NsInstance {
	n.sealed = nil
	forms := &sealedForms{digest: n.Digest(), members: n.Members()}
	forms.paramsJSON = forms.firstParams[:0]
	for _, vnf := range forms.members {
		for _, kdu := range vnf.KDUs {
			forms.paramsJSON = append(forms.paramsJSON, sealedParams{member: vnf.MemberVnfIndex, kdu: kdu.Name, json: n.ParamsJSON(vnf.MemberVnfIndex, kdu)})
		}
	}
	n.sealed = forms
	return n
}

// VNF is one VNF of the full form: a vnf-profile of the NSD and the KDUs it declares.
type VNF struct {
	// MemberVnfIndex is a vnf-profile id of the NSD.
	MemberVnfIndex string
	// Params are the VNF-level parameters (OSM's additionalParamsForVnf[].additionalParams),
	// nil when none.
	Params map[string]any
	// K8sNamespace is the Kubernetes namespace of the VNF's KDUs, unless a KDU names its own.
	K8sNamespace string
	// KDUs are the KDUs declared, in the file's order; the VNFD's others run with no values.
	KDUs []KDU
	// Path names the item in messages and field lines ("vnfs[1]"; "" in the short form); set
	// by Members.
	Path string
}

// KDU names a KDU of the VNF and its Helm values.
type KDU struct {
	// Name is a KDU name of the VNFD.
	Name string
	// Model is the chart to run (OSM's kdu_model: "<repo>/<chart>" or
	// "<repo>/<chart>:<version>"); "" runs the VNFD's helm-chart and is never compared.
	Model string
	// K8sNamespace is the Kubernetes namespace of the KDU; "" for the VNF's or the NS's.
	K8sNamespace string
	// Params are the Helm values, nil when the file has none. They hold only
	// JSON types: map[string]any, []any, string, int64, float64, bool, nil.
	// ResolveValues merges the values of ValuesFrom under them.
	Params map[string]any
	// ValuesFrom are the ConfigMaps and Secrets whose values are merged, in
	// order, under Params (HelmRelease's valuesFrom).
	ValuesFrom []ValuesReference
	// Path names the KDU in messages and field lines ("kdu", "vnfs[0].kdus[1]"); set by
	// Members.
	Path string
}

// Members returns the VNFs the instance declares, the short form as one VNF of one KDU, with
// the Path of each VNF and KDU filled in. The VNFs of a sealed instance are made once and
// shared: read them, do not change them.
func (n NsInstance) Members() []VNF {
	if n.sealed != nil {
		return n.sealed.members
	}
	if n.VNFs == nil {
		kdu := n.KDU
		kdu.Path = "kdu"
		return []VNF{{MemberVnfIndex: n.VnfName, KDUs: []KDU{kdu}}}
	}
	members := make([]VNF, len(n.VNFs))
	for i, vnf := range n.VNFs {
		vnf.Path = fmt.Sprintf("vnfs[%d]", i)
		vnf.KDUs = slices.Clone(vnf.KDUs)
		for j := range vnf.KDUs {
			vnf.KDUs[j].Path = fmt.Sprintf("%s.kdus[%d]", vnf.Path, j)
		}
		members[i] = vnf
	}
	return members
}

// withoutValues returns the instance without its parameters and values, its references
// alone: what an invalid revision keeps of it (ValidationError.Parsed).
func (n NsInstance) withoutValues() NsInstance {
	n.Params, n.KDU.Params, n.KDU.ValuesFrom, n.digestKey, n.sealed = nil, nil, nil, nil, nil
	if n.VNFs != nil {
		n.VNFs = slices.Clone(n.VNFs)
	}
	for i := range n.VNFs {
		n.VNFs[i].Params, n.VNFs[i].KDUs = nil, slices.Clone(n.VNFs[i].KDUs)
		for j := range n.VNFs[i].KDUs {
			n.VNFs[i].KDUs[j].Params, n.VNFs[i].KDUs[j].ValuesFrom = nil, nil
		}
	}
	return n
}

// sealedParams is the canonical JSON of the values of KDU kdu of VNF member.
type sealedParams struct{ member, kdu, json string }

// SourceRef locates a declaration in the revision.
type SourceRef struct {
	// File is a slash path relative to the artifact root.
	File string
	// Line is the line of `kind`, or of the document start without one.
	Line int
	// FieldLines has the line of each field the file sets, by its dotted
	// name ("nsdName", "kdu.name", "vnfs[1].kdus[0].model"), so that a later
	// check can point at it.
	FieldLines map[string]int
}

// LineOf returns the line of the field name, or Line when the file does not
// set it.
func (s SourceRef) LineOf(name string) int {
	if line, ok := s.FieldLines[name]; ok {
		return line
	}
	return s.Line
}

// FieldPath is the dotted name of a field of an item: "kdu" and "name" give "kdu.name".
func FieldPath(item, field string) string {
	if item == "" {
		return field
	}
	return item + "." + field
}

// ParamsJSON is the canonical JSON of the Helm values of kdu, a KDU of VNF member (sorted keys,
// no spaces); "{}" when there are none. It panics only for Params holding a value JSON cannot
// encode, which Load never builds.
func (n NsInstance) ParamsJSON(member string, kdu KDU) string {
	if n.sealed != nil {
		// Of duplicates, the last counts.
		for _, sealed := range slices.Backward(n.sealed.paramsJSON) {
			if sealed.member == member && sealed.kdu == kdu.Name {
				return sealed.json
			}
		}
	}
	return string(mustCanonicalJSON(paramsOrEmpty(kdu.Params)))
}

// Digest is "sha256:<hex>" of a canonical JSON of everything that defines
// the instance: NSD, VNFs, VIM account, KDUs, their params and charts,
// the NS-level settings and the description (not the name, which identifies
// it, nor where it is declared), so that the operator can tell whether a
// declaration changed since it was applied. A field added since the first
// format is left out when unset, so that a file of that format keeps its
// digest (status inventories hold it).
//
// The digest is kept in status, which more people may read than the Secrets
// an instance's values come from. A plain hash of values that hold a short
// password could be reversed by trying every password, so the digest of such
// an instance is "hmac-sha256:<hex>", keyed by a hash of the UIDs and
// resourceVersions of the Secrets read: random, in no status, event or log,
// and known only to who may read the Secrets. It changes when they change
// (even a key the instance does not read), which only makes the next plan
// compare the live values with the declared ones, as every drift check does.
func (n NsInstance) Digest() string {
	if n.sealed != nil {
		return n.sealed.digest
	}
	type kduDefinition struct {
		Name         string         `json:"name"`
		Model        string         `json:"model,omitempty"`
		K8sNamespace string         `json:"k8sNamespace,omitempty"`
		Params       map[string]any `json:"params"`
	}
	type vnfDefinition struct {
		MemberVnfIndex string          `json:"memberVnfIndex"`
		Params         map[string]any  `json:"params,omitempty"`
		K8sNamespace   string          `json:"k8sNamespace,omitempty"`
		KDUs           []kduDefinition `json:"kdus"`
	}
	definition := struct {
		NsdName        string         `json:"nsdName"`
		VnfName        string         `json:"vnfName"`
		VimAccountName string         `json:"vimAccountName"`
		KDUName        string         `json:"kduName"`
		Params         map[string]any `json:"params"`
		Description    string         `json:"description"`
		// Added with the full form: omitted when unset.
		KDUModel             string          `json:"kduModel,omitempty"`
		KDUK8sNamespace      string          `json:"kduK8sNamespace,omitempty"`
		VNFs                 []vnfDefinition `json:"vnfs,omitempty"`
		NsParams             map[string]any  `json:"nsParams,omitempty"`
		K8sNamespace         string          `json:"k8sNamespace,omitempty"`
		DeployTimeoutSeconds int64           `json:"deployTimeoutSeconds,omitempty"`
	}{
		NsdName: n.NsdName, VnfName: n.VnfName, VimAccountName: n.VimAccountName,
		KDUName: n.KDU.Name, Params: paramsOrEmpty(n.KDU.Params), Description: n.Description,
		KDUModel: n.KDU.Model, KDUK8sNamespace: n.KDU.K8sNamespace,
		NsParams: n.Params, K8sNamespace: n.K8sNamespace, DeployTimeoutSeconds: int64(n.DeployTimeout / time.Second),
	}
	for _, vnf := range n.VNFs {
		item := vnfDefinition{MemberVnfIndex: vnf.MemberVnfIndex, Params: vnf.Params, K8sNamespace: vnf.K8sNamespace}
		for _, kdu := range vnf.KDUs {
			item.KDUs = append(item.KDUs, kduDefinition{kdu.Name, kdu.Model, kdu.K8sNamespace, paramsOrEmpty(kdu.Params)})
		}
		definition.VNFs = append(definition.VNFs, item)
	}
	if n.digestKey != nil {
		mac := hmac.New(sha256.New, n.digestKey)
		mac.Write(mustCanonicalJSON(definition))
		return "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil))
	}
	sum := sha256.Sum256(mustCanonicalJSON(definition))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// OwnerParam is the key of additionalParamsForNs that holds the owner's marker (see
// engine.OwnerParam): a file may not declare it.
const OwnerParam = "osmops_owner"

// The fields of a deployment file, of a vnfs item and of a KDU map (kdu, kdus items).
var (
	deploymentFields = Schema.fieldsOf(DeploymentFileKind, "")
	metadataFields   = Schema.fieldsOf(DeploymentFileKind, "metadata")
	vnfFields        = Schema.fieldsOf(DeploymentFileKind, "vnfs[]")
	kduFields        = Schema.fieldsOf(DeploymentFileKind, "kdu")
)

// parseDeploymentFile reads one deployment file (file is its slash path
// relative to the artifact root), and returns its parsed size too. It returns
// every problem it finds; the NsInstance is meaningful only without problems.
func parseDeploymentFile(file string, data []byte) (NsInstance, int64, []Problem) {
	top, size, problems := decodeSingleDocument(file, data)
	switch {
	case problems != nil:
		return NsInstance{}, size, problems
	case top == nil:
		return NsInstance{}, size, []Problem{problemf(file, 0, "the file is empty; it must declare one %s", KindNsInstance)}
	case top.Kind != yaml.MappingNode:
		return NsInstance{}, size, []Problem{problemf(file, top.Line, "the document is %s; it must be a map with kind: %s", describeNode(top), KindNsInstance)}
	}

	d := &deploymentReader{file: file, lines: map[string]int{}}
	values := d.fields("", top, deploymentFields)
	kind := d.requiredString(values, "", "kind", top.Line)
	if kind != "" && kind != KindNsInstance {
		// Another kind of YAML file: its fields would only add noise.
		return NsInstance{}, size, []Problem{problemf(file, values["kind"].line, "field \"kind\" is %q; it must be %q", kind, KindNsInstance)}
	}
	instance := NsInstance{
		Name:           d.requiredString(values, "", "name", top.Line),
		Description:    d.optionalString(values, "", "description"),
		NsdName:        d.requiredString(values, "", "nsdName", top.Line),
		VimAccountName: d.requiredString(values, "", "vimAccountName", top.Line),
		Params:         d.lcmParams(values, "", true),
		K8sNamespace:   d.namespace(values, ""),
		DeployTimeout:  d.deployTimeout(values),
	}
	if vnfs, full := values["vnfs"]; full {
		for _, short := range []string{"vnfName", "kdu"} {
			if field, both := values[short]; both {
				d.problems = append(d.problems, problemf(file, field.line,
					"field %q belongs to the short form (vnfName and kdu: one KDU of one VNF), and the file uses the full one (vnfs): write the KDU as an item of vnfs", short))
			}
		}
		instance.VNFs = d.vnfs(vnfs)
	} else if _, named := values["vnfName"]; !named && values["kdu"].value == nil {
		// Neither form: say both, as a user new to the format does not know the full one.
		d.problems = append(d.problems, problemf(file, top.Line,
			`missing what the NS instance runs: "vnfName" and "kdu" (one KDU of one VNF), or "vnfs" (several VNFs and KDUs)`))
	} else {
		instance.VnfName = d.requiredString(values, "", "vnfName", top.Line)
		instance.KDU = d.shortKDU(values, top.Line)
	}
	d.metadata(values)
	if message := invalidNSName(instance.Name); message != "" {
		d.problems = append(d.problems, problemf(file, values["name"].line, "%s", message))
	}
	instance.Source = SourceRef{File: file, Line: top.Line, FieldLines: d.lines}
	if field, ok := values["kind"]; ok {
		instance.Source.Line = field.line
	}
	return instance, size, d.problems
}

// deploymentReader collects the problems and field lines of one deployment
// file as its fields are read.
type deploymentReader struct {
	file     string
	problems []Problem
	lines    map[string]int
}

// fields reads the fields of a map, refusing the unknown ones; prefix names
// the map in messages ("kdu.").
func (d *deploymentReader) fields(prefix string, mapping *yaml.Node, known []string) map[string]mappingField {
	fields, problems := mappingFields(d.file, prefix, mapping)
	d.problems = append(d.problems, problems...)
	values := make(map[string]mappingField, len(fields))
	for _, field := range fields {
		if !slices.Contains(known, field.key) {
			d.problems = append(d.problems, problemf(d.file, field.line, "unknown field %q%s", prefix+field.key, didYouMean(prefix, field.key, known)))
			continue
		}
		values[field.key] = field
		d.lines[prefix+field.key] = field.line
	}
	return values
}

// optionalString reads the string field prefix+key, "" when missing.
func (d *deploymentReader) optionalString(values map[string]mappingField, prefix, key string) string {
	field, ok := values[key]
	if !ok {
		return ""
	}
	value, problem := scalarString(d.file, prefix+key, field)
	if problem != nil {
		d.problems = append(d.problems, *problem)
	}
	return value
}

// requiredString reads the string field prefix+key, which must be set and
// not empty; mapLine is where the map starts, to report a missing field.
func (d *deploymentReader) requiredString(values map[string]mappingField, prefix, key string, mapLine int) string {
	field, ok := values[key]
	if !ok {
		d.problems = append(d.problems, problemf(d.file, mapLine, "missing required field %q", prefix+key))
		return ""
	}
	value, problem := scalarString(d.file, prefix+key, field)
	switch {
	case problem != nil:
		d.problems = append(d.problems, *problem)
	case value == "":
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must not be empty", prefix+key))
	}
	return value
}

// shortKDU reads the required kdu map of the short form.
func (d *deploymentReader) shortKDU(values map[string]mappingField, mapLine int) KDU {
	field, ok := values["kdu"]
	switch {
	case !ok:
		d.problems = append(d.problems, problemf(d.file, mapLine, "missing required field %q", "kdu"))
		return KDU{}
	case field.value.Kind != yaml.MappingNode:
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be a map with name and params, not %s", "kdu", describeNode(field.value)))
		return KDU{}
	}
	return d.kdu("kdu", field.value, field.line)
}

// metadata checks the optional metadata map, which only annotations and labels (maps of
// strings) may hold: they say whether variables are substituted in the file (substitute.go).
func (d *deploymentReader) metadata(values map[string]mappingField) {
	field, ok := values["metadata"]
	if !ok {
		return
	}
	if field.value.Kind != yaml.MappingNode {
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be a map with annotations or labels, not %s", "metadata", describeNode(field.value)))
		return
	}
	for key, sub := range d.fields("metadata.", field.value, metadataFields) {
		if sub.value.Kind != yaml.MappingNode {
			d.problems = append(d.problems, problemf(d.file, sub.line, "field %q must be a map of strings, not %s", "metadata."+key, describeNode(sub.value)))
			continue
		}
		entries, problems := mappingFields(d.file, "metadata."+key+".", sub.value)
		d.problems = append(d.problems, problems...)
		for _, entry := range entries {
			if _, problem := scalarString(d.file, "metadata."+key+"."+entry.key, entry); problem != nil {
				d.problems = append(d.problems, *problem)
			}
		}
	}
}

// kdu reads a KDU map (the short form's kdu, an item of kdus); path names it ("kdu",
// "vnfs[0].kdus[1]").
func (d *deploymentReader) kdu(path string, mapping *yaml.Node, line int) KDU {
	prefix := path + "."
	values := d.fields(prefix, mapping, kduFields)
	kdu := KDU{
		Name:         d.requiredString(values, prefix, "name", line),
		Model:        d.optionalString(values, prefix, "model"),
		K8sNamespace: d.namespace(values, prefix),
		Params:       d.helmValues(values, prefix),
		ValuesFrom:   d.valuesFrom(values, prefix),
	}
	if message := invalidModel(kdu.Model); message != "" {
		d.problems = append(d.problems, problemf(d.file, values["model"].line, "field %q: %s", prefix+"model", message))
	}
	return kdu
}

// vnfs reads the full form's list of VNFs.
func (d *deploymentReader) vnfs(field mappingField) []VNF {
	if field.value.Kind != yaml.SequenceNode || len(field.value.Content) == 0 {
		d.problems = append(d.problems, problemf(d.file, field.line,
			"field %q must be a list of VNFs (memberVnfIndex, kdus), not %s", "vnfs", describeNode(field.value)))
		return nil
	}
	vnfs := make([]VNF, 0, len(field.value.Content))
	firstLine := map[string]int{}
	for i, item := range field.value.Content {
		path := fmt.Sprintf("vnfs[%d]", i)
		if item.Kind != yaml.MappingNode {
			d.problems = append(d.problems, problemf(d.file, item.Line, "%s must be a map with memberVnfIndex and kdus, not %s", path, describeNode(item)))
			continue
		}
		prefix := path + "."
		values := d.fields(prefix, item, vnfFields)
		vnf := VNF{
			MemberVnfIndex: d.requiredString(values, prefix, "memberVnfIndex", item.Line),
			Params:         d.lcmParams(values, prefix, false),
			K8sNamespace:   d.namespace(values, prefix),
			KDUs:           d.kdus(values, prefix, item.Line),
		}
		if first, twice := firstLine[vnf.MemberVnfIndex]; twice && vnf.MemberVnfIndex != "" {
			d.problems = append(d.problems, problemf(d.file, values["memberVnfIndex"].line,
				"%smemberVnfIndex %q is declared already at line %d: give each VNF one item", prefix, vnf.MemberVnfIndex, first))
		} else if vnf.MemberVnfIndex != "" {
			firstLine[vnf.MemberVnfIndex] = values["memberVnfIndex"].line
		}
		vnfs = append(vnfs, vnf)
	}
	return vnfs
}

// kdus reads the required kdus list of a vnfs item.
func (d *deploymentReader) kdus(values map[string]mappingField, prefix string, mapLine int) []KDU {
	field, ok := values["kdus"]
	switch {
	case !ok:
		d.problems = append(d.problems, problemf(d.file, mapLine, "missing required field %q", prefix+"kdus"))
		return nil
	case field.value.Kind != yaml.SequenceNode || len(field.value.Content) == 0:
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be a list of KDUs (name, params), not %s", prefix+"kdus", describeNode(field.value)))
		return nil
	}
	kdus := make([]KDU, 0, len(field.value.Content))
	firstLine := map[string]int{}
	for i, item := range field.value.Content {
		path := fmt.Sprintf("%skdus[%d]", prefix, i)
		if item.Kind != yaml.MappingNode {
			d.problems = append(d.problems, problemf(d.file, item.Line, "%s must be a map with name and params, not %s", path, describeNode(item)))
			continue
		}
		kdu := d.kdu(path, item, item.Line)
		nameLine := d.lines[FieldPath(path, "name")]
		if first, twice := firstLine[kdu.Name]; twice && kdu.Name != "" {
			d.problems = append(d.problems, problemf(d.file, nameLine, "%s.name %q is declared already at line %d: give each KDU one item", path, kdu.Name, first))
		} else if kdu.Name != "" {
			firstLine[kdu.Name] = nameLine
		}
		kdus = append(kdus, kdu)
	}
	return kdus
}

// paramsMap reads the optional params map of the map prefix names; null counts as none.
func (d *deploymentReader) paramsMap(values map[string]mappingField, prefix, what string) (map[string]any, *yaml.Node) {
	field, ok := values["params"]
	if !ok || field.value.ShortTag() == "!!null" {
		return nil, nil
	}
	if field.value.Kind != yaml.MappingNode {
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be a map of %s, not %s", prefix+"params", what, describeNode(field.value)))
		return nil, nil
	}
	value, problems := jsonValue(d.file, prefix+"params", field.value)
	d.problems = append(d.problems, problems...)
	return value.(map[string]any), field.value
}

// helmValues reads the params of a KDU map: its Helm values.
func (d *deploymentReader) helmValues(values map[string]mappingField, prefix string) map[string]any {
	params, node := d.paramsMap(values, prefix, "Helm values")
	for _, key := range mapKeys(node) {
		if slices.Contains(kduoptions.Reserved, key.Value) {
			d.problems = append(d.problems, problemf(d.file, key.Line,
				"field %q: %q is an option of OSM's KDU upgrade, not a Helm value: OSM would not pass it to Helm", prefix+"params", key.Value))
		}
	}
	return params
}

// osmParamName is the form OSM requires of an NS or VNF parameter name (instance_topics.py,
// _format_additional_params: a Jinja2 identifier).
var osmParamName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// lcmParams reads the params of the NS (ns) or of a VNF: OSM's additionalParamsForNs or
// additionalParamsForVnf[].additionalParams, which OSM's LCM gives to the descriptors'
// primitives.
func (d *deploymentReader) lcmParams(values map[string]mappingField, prefix string, ns bool) map[string]any {
	params, node := d.paramsMap(values, prefix, "parameters")
	for _, key := range mapKeys(node) {
		switch {
		case !osmParamName.MatchString(key.Value):
			d.problems = append(d.problems, problemf(d.file, key.Line,
				"field %q: %q is not a name OSM accepts: only letters, digits and _, not starting with a digit", prefix+"params", key.Value))
		case ns && key.Value == OwnerParam:
			d.problems = append(d.problems, problemf(d.file, key.Line,
				"field %q: %q is reserved: osmops records there which OsmDeployment owns the instance", prefix+"params", key.Value))
		}
	}
	return params
}

// mapKeys returns the key nodes of a map node (none for nil).
func mapKeys(mapping *yaml.Node) []*yaml.Node {
	if mapping == nil {
		return nil
	}
	keys := make([]*yaml.Node, 0, len(mapping.Content)/2)
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		keys = append(keys, mapping.Content[i])
	}
	return keys
}

// namespace reads the optional k8sNamespace of the map prefix names: a Kubernetes namespace
// name, which Helm requires (OSM itself checks only its name schema).
func (d *deploymentReader) namespace(values map[string]mappingField, prefix string) string {
	name := d.optionalString(values, prefix, "k8sNamespace")
	if name == "" {
		return ""
	}
	if len(validation.IsDNS1123Label(name)) > 0 {
		d.problems = append(d.problems, problemf(d.file, values["k8sNamespace"].line,
			"field %q: %q is not a Kubernetes namespace name: at most 63 lowercase letters, digits and -, starting and ending with a letter or digit",
			prefix+"k8sNamespace", name))
	}
	return name
}

// deployTimeout reads the optional deployTimeout: a duration of whole seconds, at least 1s.
func (d *deploymentReader) deployTimeout(values map[string]mappingField) time.Duration {
	text := d.optionalString(values, "", "deployTimeout")
	if text == "" {
		return 0
	}
	timeout, err := time.ParseDuration(text)
	if err != nil || timeout < time.Second || timeout%time.Second != 0 {
		d.problems = append(d.problems, problemf(d.file, values["deployTimeout"].line,
			"field %q is %q; it must be a duration of whole seconds, at least 1s (like 300s, 10m or 1h30m)", "deployTimeout", text))
		return 0
	}
	return timeout
}

// chartModel is the form of a KDU model osmops accepts: a chart of a Helm repository that OSM
// knows, with an optional version. N2VC (k8s_helm_base_conn.py, _split_version and
// _split_repo) reads "<repo>/<chart>:<version>" so; it takes a model with more than one "/"
// for a file of the package and a URL for a chart archive, where no version can be given.
var chartModel = regexp.MustCompile(`^[^/:\s]+/[^/:\s]+(:[^/:\s]+)?$`)

// invalidModel says what is wrong with a KDU model, or "" when it is valid or empty.
func invalidModel(model string) string {
	switch {
	case model == "":
		return ""
	case !chartModel.MatchString(model):
		return fmt.Sprintf("%q is not a chart reference: write <repo>/<chart> or <repo>/<chart>:<version> (a chart of a Helm repository OSM knows)", model)
	case len(model) > maxNSNameLength || strings.ContainsAny(model, osmForbiddenNameChars):
		return fmt.Sprintf("%q is longer than %d characters or contains one of , ; ( ) ' \": OSM refuses it", model, maxNSNameLength)
	}
	return ""
}

// invalidNSName says what is wrong with an NS instance name, or "" when it
// is valid or empty (an empty one is reported as a missing field).
func invalidNSName(name string) string {
	switch {
	case utf8.RuneCountInString(name) > maxNSNameLength:
		return fmt.Sprintf("NS instance name %q... is longer than %d characters", truncate(name, 32), maxNSNameLength)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Sprintf("NS instance name %q contains a control character", name)
	case !utf8.ValidString(name):
		return fmt.Sprintf("NS instance name %q is not valid UTF-8", name)
	case strings.ContainsAny(name, osmForbiddenNameChars):
		at := strings.IndexAny(name, osmForbiddenNameChars)
		forbidden := name[at : at+1]
		return fmt.Sprintf("NS instance name %q contains %q: OSM refuses names with any of , ; ( ) ' \"", name, forbidden)
	}
	return ""
}

// truncate keeps the first n runes of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// didYouMean suggests the known field that differs from key only in case,
// the usual typo ("vnfname").
func didYouMean(prefix, key string, known []string) string {
	for _, candidate := range known {
		if strings.EqualFold(candidate, key) {
			return fmt.Sprintf(" (did you mean %q?)", prefix+candidate)
		}
	}
	return ""
}
