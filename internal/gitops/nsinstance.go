package gitops

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/osm"
)

// KindNsInstance is the only kind a deployment file may declare.
const KindNsInstance = "NsInstance"

// maxNSNameLength bounds an NS instance name, in characters.
const maxNSNameLength = 255

// osmForbiddenNameChars are the characters OSM's name schema (^[^,;()'"]+$) refuses.
const osmForbiddenNameChars = `,;()'"`

// NsInstance is the NS instance that one deployment file declares: the OSM
// cluster must run an instance Name of NSD NsdName on VIM account
// VimAccountName, whose KDU KDU.Name in VNF VnfName runs with KDU.Params.
type NsInstance struct {
	// Name is the NS instance name; unique in a revision.
	Name string
	// Description is optional (OSM's nsDescription).
	Description string
	// NsdName is the NSD's descriptor id.
	NsdName string
	// VnfName is a vnf-profile id (member-vnf-index) of the NSD.
	VnfName string
	// VimAccountName is the VIM account's name.
	VimAccountName string
	// KDU is the KDU to run and its Helm values.
	KDU KDU
	// Source says where the instance is declared.
	Source SourceRef

	// digestKey, when the instance's definition holds what Secrets hold (values from a Secret,
	// variables substituted from one), keys its Digest: see Digest.
	digestKey []byte

	// sealed holds ParamsJSON and Digest computed once (see Sealed): a plan compares every
	// instance of a revision, and encoding them each time was most of its cost.
	sealed *sealedForms
}

type sealedForms struct{ paramsJSON, digest string }

// Sealed returns the instance with its ParamsJSON and Digest computed once, as Load returns
// instances; changes made to its fields afterwards are not seen by them.
func (n NsInstance) Sealed() NsInstance {
	n.sealed = nil
	n.sealed = &sealedForms{paramsJSON: n.ParamsJSON(), digest: n.Digest()}
	return n
}

// KDU names a KDU of the VNF and its Helm values.
type KDU struct {
	// Name is a KDU name of the VNFD.
	Name string
	// Params are the Helm values, nil when the file has none. They hold only
	// JSON types: map[string]any, []any, string, int64, float64, bool, nil.
	// ResolveValues merges the values of ValuesFrom under them.
	Params map[string]any
	// ValuesFrom are the ConfigMaps and Secrets whose values are merged, in
	// order, under Params (HelmRelease's valuesFrom).
	ValuesFrom []ValuesReference
}

// SourceRef locates a declaration in the revision.
type SourceRef struct {
	// File is a slash path relative to the artifact root.
	File string
	// Line is the line of `kind`, or of the document start without one.
	Line int
	// FieldLines has the line of each field the file sets, by its dotted
	// name ("nsdName", "kdu.name"), so that a later check can point at it.
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

// ParamsJSON is the canonical JSON of the Helm values (sorted keys, no
// spaces); "{}" when there are none. It panics only for Params holding a
// value JSON cannot encode, which Load never builds.
func (n NsInstance) ParamsJSON() string {
	if n.sealed != nil {
		return n.sealed.paramsJSON
	}
	return string(mustCanonicalJSON(paramsOrEmpty(n.KDU.Params)))
}

// Digest is "sha256:<hex>" of a canonical JSON of everything that defines
// the instance: NSD, VNF, VIM account, KDU name, params and description
// (not the name, which identifies it, nor where it is declared), so that the
// operator can tell whether a declaration changed since it was applied.
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
	definition := struct {
		NsdName        string         `json:"nsdName"`
		VnfName        string         `json:"vnfName"`
		VimAccountName string         `json:"vimAccountName"`
		KDUName        string         `json:"kduName"`
		Params         map[string]any `json:"params"`
		Description    string         `json:"description"`
	}{n.NsdName, n.VnfName, n.VimAccountName, n.KDU.Name, paramsOrEmpty(n.KDU.Params), n.Description}
	if n.digestKey != nil {
		mac := hmac.New(sha256.New, n.digestKey)
		mac.Write(mustCanonicalJSON(definition))
		return "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil))
	}
	sum := sha256.Sum256(mustCanonicalJSON(definition))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The fields of a deployment file and of its kdu map.
var (
	deploymentFields = []string{"kind", "metadata", "name", "description", "nsdName", "vnfName", "vimAccountName", "kdu"}
	metadataFields   = []string{"annotations", "labels"}
	kduFields        = []string{"name", "params", "valuesFrom"}
)

// parseDeploymentFile reads one deployment file (file is its slash path
// relative to the artifact root). It returns every problem it finds; the
// NsInstance is meaningful only without problems.
func parseDeploymentFile(file string, data []byte) (NsInstance, []Problem) {
	top, problems := decodeSingleDocument(file, data)
	switch {
	case problems != nil:
		return NsInstance{}, problems
	case top == nil:
		return NsInstance{}, []Problem{problemf(file, 0, "the file is empty; it must declare one %s", KindNsInstance)}
	case top.Kind != yaml.MappingNode:
		return NsInstance{}, []Problem{problemf(file, top.Line, "the document is %s; it must be a map with kind: %s", describeNode(top), KindNsInstance)}
	}

	d := &deploymentReader{file: file, lines: map[string]int{}}
	values := d.fields("", top, deploymentFields)
	kind := d.requiredString(values, "", "kind", top.Line)
	if kind != "" && kind != KindNsInstance {
		// Another kind of YAML file: its fields would only add noise.
		return NsInstance{}, []Problem{problemf(file, values["kind"].line, "field \"kind\" is %q; it must be %q", kind, KindNsInstance)}
	}
	instance := NsInstance{
		Name:           d.requiredString(values, "", "name", top.Line),
		Description:    d.optionalString(values, "", "description"),
		NsdName:        d.requiredString(values, "", "nsdName", top.Line),
		VnfName:        d.requiredString(values, "", "vnfName", top.Line),
		VimAccountName: d.requiredString(values, "", "vimAccountName", top.Line),
		KDU:            d.kdu(values, top.Line),
	}
	d.metadata(values)
	if message := invalidNSName(instance.Name); message != "" {
		d.problems = append(d.problems, problemf(file, values["name"].line, "%s", message))
	}
	instance.Source = SourceRef{File: file, Line: top.Line, FieldLines: d.lines}
	if field, ok := values["kind"]; ok {
		instance.Source.Line = field.line
	}
	return instance, d.problems
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

// kdu reads the required kdu map.
func (d *deploymentReader) kdu(values map[string]mappingField, mapLine int) KDU {
	field, ok := values["kdu"]
	switch {
	case !ok:
		d.problems = append(d.problems, problemf(d.file, mapLine, "missing required field %q", "kdu"))
		return KDU{}
	case field.value.Kind != yaml.MappingNode:
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be a map with name and params, not %s", "kdu", describeNode(field.value)))
		return KDU{}
	}
	kduValues := d.fields("kdu.", field.value, kduFields)
	return KDU{
		Name:       d.requiredString(kduValues, "kdu.", "name", field.line),
		Params:     d.params(kduValues),
		ValuesFrom: d.valuesFrom(kduValues, "kdu."),
	}
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

// params reads the optional kdu.params map; null counts as none.
func (d *deploymentReader) params(values map[string]mappingField) map[string]any {
	field, ok := values["params"]
	if !ok || field.value.ShortTag() == "!!null" {
		return nil
	}
	if field.value.Kind != yaml.MappingNode {
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be a map of Helm values, not %s", "kdu.params", describeNode(field.value)))
		return nil
	}
	value, problems := jsonValue(d.file, "kdu.params", field.value)
	d.problems = append(d.problems, problems...)
	for i := 0; i+1 < len(field.value.Content); i += 2 {
		if key := field.value.Content[i]; slices.Contains(osm.ReservedKDUValueKeys, key.Value) {
			d.problems = append(d.problems, problemf(d.file, key.Line,
				"field %q: %q is an option of OSM's KDU upgrade, not a Helm value: OSM would not pass it to Helm", "kdu.params", key.Value))
		}
	}
	return value.(map[string]any)
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
