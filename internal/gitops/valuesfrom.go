package gitops

import (
	"context"
	"crypto/sha256"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fluxcd/pkg/runtime/transform"
	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/strvals"
)

// Kinds a values reference may name.
const (
	ValuesKindConfigMap = "ConfigMap"
	ValuesKindSecret    = "Secret"
)

// DefaultValuesKey is the key of a ConfigMap or Secret read when a reference names none
// (HelmRelease's default).
const DefaultValuesKey = "values.yaml"

// Bounds on values references: a tenant's repository and objects may be hostile.
const (
	// maxValuesReferences bounds the references of one KDU.
	maxValuesReferences = 16
	// MaxValuesObjects bounds the distinct ConfigMaps and Secrets one revision reads.
	MaxValuesObjects = 32
	// MaxValuesBytes bounds the value of one key read from a ConfigMap or Secret (and of
	// every key substituteFrom reads): the API server bounds an object to about 1.5 MiB, this
	// bounds what is parsed and kept.
	MaxValuesBytes = 1 << 20
)

// HelmRelease's validation of a values reference.
var (
	objectNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	valuesKeyPattern  = regexp.MustCompile(`^[\-._a-zA-Z0-9]+$`)
	targetPathPattern = regexp.MustCompile(`^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$`)
)

// valuesReferenceFields are the fields of one valuesFrom item. There is no namespace: values
// are read from the OsmDeployment's namespace only, so that a tenant never reads another's.
var valuesReferenceFields = Schema.fieldsOf(DeploymentFileKind, "kdu.valuesFrom[]")

// ValuesReference is one item of a KDU's valuesFrom: a key of a ConfigMap or Secret of the
// OsmDeployment's namespace, with HelmRelease's meaning.
type ValuesReference struct {
	// Kind is ConfigMap or Secret.
	Kind string
	// Name of the object.
	Name string
	// ValuesKey is the key read; DefaultValuesKey when the file sets none.
	ValuesKey string
	// TargetPath, when set, puts the key's text at this path of the values (Helm's --set
	// syntax) instead of merging it as a YAML document.
	TargetPath string
	// Optional references that do not resolve are skipped.
	Optional bool
	// Field names the reference in messages ("kdu.valuesFrom[0]") and Line is its line.
	Field string
	Line  int
}

// String names the reference's object and key ("Secret db-password key values.yaml").
// ReadsValues tells whether a KDU of the revision has a valuesFrom reference that match accepts.
func (r *Revision) ReadsValues(match func(ValuesReference) bool) bool {
	for _, ns := range r.NsInstances {
		for _, vnf := range ns.Members() {
			for _, kdu := range vnf.KDUs {
				if slices.ContainsFunc(kdu.ValuesFrom, match) {
					return true
				}
			}
		}
	}
	return false
}

func (r ValuesReference) String() string {
	return fmt.Sprintf("%s %s key %s", r.Kind, r.Name, r.ValuesKey)
}

// editableKDUs returns the KDUs of the instance, to be changed in place. The full form's VNFs
// and KDUs are copied first: the instance may be a shallow copy of one in a cached revision,
// which must keep its declared values.
func (n *NsInstance) editableKDUs() []*KDU {
	if n.VNFs == nil {
		return []*KDU{&n.KDU}
	}
	n.VNFs = slices.Clone(n.VNFs)
	var kdus []*KDU
	for i := range n.VNFs {
		n.VNFs[i].KDUs = slices.Clone(n.VNFs[i].KDUs)
		for j := range n.VNFs[i].KDUs {
			kdus = append(kdus, &n.VNFs[i].KDUs[j])
		}
	}
	return kdus
}

// valuesFrom reads the optional valuesFrom list of a kdu map (prefix "kdu.").
func (d *deploymentReader) valuesFrom(values map[string]mappingField, prefix string) []ValuesReference {
	field, ok := values["valuesFrom"]
	name := prefix + "valuesFrom"
	switch {
	case !ok || field.value.ShortTag() == "!!null":
		return nil
	case field.value.Kind != yaml.SequenceNode:
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be a list of ConfigMap and Secret references, not %s", name, describeNode(field.value)))
		return nil
	case len(field.value.Content) > maxValuesReferences:
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q has %d items; at most %d are allowed", name, len(field.value.Content), maxValuesReferences))
		return nil
	}
	refs := make([]ValuesReference, 0, len(field.value.Content))
	for i, item := range field.value.Content {
		itemName := fmt.Sprintf("%s[%d]", name, i)
		if item.Kind != yaml.MappingNode {
			d.problems = append(d.problems, problemf(d.file, item.Line, "field %q must be a map with kind and name, not %s", itemName, describeNode(item)))
			continue
		}
		fields := d.fields(itemName+".", item, valuesReferenceFields)
		ref := ValuesReference{
			Kind:       d.requiredString(fields, itemName+".", "kind", item.Line),
			Name:       d.requiredString(fields, itemName+".", "name", item.Line),
			ValuesKey:  d.optionalString(fields, itemName+".", "valuesKey"),
			TargetPath: d.optionalString(fields, itemName+".", "targetPath"),
			Optional:   d.optionalBool(fields, itemName+".", "optional"),
			Field:      itemName,
			Line:       item.Line,
		}
		if ref.ValuesKey == "" {
			ref.ValuesKey = DefaultValuesKey
		}
		d.checkValuesReference(ref, fields)
		refs = append(refs, ref)
	}
	return refs
}

// checkValuesReference refuses what HelmRelease's schema refuses, and a name that would leave
// the namespace.
func (d *deploymentReader) checkValuesReference(ref ValuesReference, fields map[string]mappingField) {
	at := func(key string) int { return fields[key].line }
	if ref.Kind != "" && ref.Kind != ValuesKindConfigMap && ref.Kind != ValuesKindSecret {
		d.problems = append(d.problems, problemf(d.file, at("kind"), "field %q is %q; it must be ConfigMap or Secret", ref.Field+".kind", ref.Kind))
	}
	switch {
	case ref.Name == "":
	case strings.Contains(ref.Name, "/"):
		d.problems = append(d.problems, problemf(d.file, at("name"),
			"field %q is %q: values are read from the OsmDeployment's namespace only; give the name alone", ref.Field+".name", ref.Name))
	case len(ref.Name) > 253 || !objectNamePattern.MatchString(ref.Name):
		d.problems = append(d.problems, problemf(d.file, at("name"), "field %q is %q, which is not a Kubernetes object name", ref.Field+".name", truncate(ref.Name, 64)))
	}
	if len(ref.ValuesKey) > 253 || !valuesKeyPattern.MatchString(ref.ValuesKey) {
		d.problems = append(d.problems, problemf(d.file, at("valuesKey"), "field %q is %q, which is not a ConfigMap or Secret key", ref.Field+".valuesKey", truncate(ref.ValuesKey, 64)))
	}
	if ref.TargetPath != "" && (len(ref.TargetPath) > 250 || !targetPathPattern.MatchString(ref.TargetPath)) {
		d.problems = append(d.problems, problemf(d.file, at("targetPath"),
			"field %q is %q: it must be a path like a.b[0].c of at most 250 characters", ref.Field+".targetPath", truncate(ref.TargetPath, 64)))
	}
}

// optionalBool reads the boolean field prefix+key, false when missing.
func (d *deploymentReader) optionalBool(values map[string]mappingField, prefix, key string) bool {
	field, ok := values[key]
	if !ok {
		return false
	}
	if field.value.Kind != yaml.ScalarNode || field.value.ShortTag() != "!!bool" {
		d.problems = append(d.problems, problemf(d.file, field.line, "field %q must be true or false", prefix+key))
		return false
	}
	return field.value.Value == "true"
}

// ValuesObject is a ConfigMap or Secret as values resolution reads it.
type ValuesObject struct {
	// Data are its keys (a ConfigMap's data as bytes).
	Data map[string][]byte
	// Version identifies this content of the object without telling it (its UID and
	// resourceVersion), to key the digests of the instances that read a Secret.
	Version string
}

// ValuesGetter reads a ConfigMap or Secret (kind) of the OsmDeployment's namespace; found is
// false when it does not exist.
type ValuesGetter func(ctx context.Context, kind, name string) (object ValuesObject, found bool, err error)

// ValuesProblems are the values references of a revision that do not resolve: an object or
// key missing, a value too large or not YAML. Each may resolve later (the object created or
// mended), so the revision is waited on, not refused.
type ValuesProblems struct {
	Problems []Problem
}

func (e *ValuesProblems) Error() string {
	return fmt.Sprintf("%d unresolved values reference(s): %s", len(e.Problems), listProblems(e.Problems, 0))
}

// ResolveValues returns a copy of the revision whose every KDU's Params are its valuesFrom
// merged as helm-controller merges a HelmRelease's: each reference in order, a YAML document
// merged deeply into the values so far, or, with a targetPath, the key's text set at that path
// with Helm's --set syntax (a quoted text as a string); the inline params merged last, on top.
// An optional reference that does not resolve is skipped. Problems are returned all at once
// in a *ValuesProblems; other errors are the getter's. Secret content never appears in a
// problem, and the digest of an instance that read a Secret is keyed by what the Secrets'
// versions are (see NsInstance.Digest).
func ResolveValues(ctx context.Context, rev *Revision, get ValuesGetter) (*Revision, error) {
	r := &valuesResolver{get: get, objects: map[string]*resolvedObject{}}
	resolved := *rev
	resolved.NsInstances = slices.Clone(rev.NsInstances)
	for i := range resolved.NsInstances {
		instance := &resolved.NsInstances[i]
		var secretVersions []string
		var origins []Origin
		changed := false
		for _, kdu := range instance.editableKDUs() {
			if len(kdu.ValuesFrom) == 0 {
				continue
			}
			params, versions, read, err := r.merge(ctx, instance.Source.File, kdu)
			if err != nil {
				return nil, err
			}
			kdu.Params, changed = params, true
			secretVersions = append(secretVersions, versions...)
			origins = append(origins, read...)
		}
		if changed {
			*instance = instance.withDigestKey(secretVersions...).withOrigins(origins...).Sealed()
		}
	}
	if len(r.problems) > 0 {
		return nil, &ValuesProblems{Problems: r.problems}
	}
	return &resolved, nil
}

// valuesResolver reads each object once per resolution, as helm-controller does, so that
// every reference to it sees one version.
type valuesResolver struct {
	get      ValuesGetter
	objects  map[string]*resolvedObject
	problems []Problem
}

type resolvedObject struct {
	object ValuesObject
	found  bool
}

// merge returns the KDU's values with its references merged under its params, the versions
// of the Secrets it read, and the origins of the objects it read.
func (r *valuesResolver) merge(ctx context.Context, file string, kdu *KDU) (map[string]any, []string, []Origin, error) {
	merged := map[string]any{}
	var secretVersions []string
	var origins []Origin
	for _, ref := range kdu.ValuesFrom {
		data, version, ok, err := r.read(ctx, file, ref)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			continue
		}
		origins = append(origins, newOrigin(ref.Kind+" "+ref.Name, version))
		if ref.Kind == ValuesKindSecret {
			secretVersions = append(secretVersions, ref.Kind+"/"+ref.Name+"@"+version)
		}
		if ref.TargetPath != "" {
			if err := setPathValue(merged, ref.TargetPath, string(data)); err != nil {
				r.problem(file, ref, "cannot be set at targetPath %q: %s", ref.TargetPath, r.shown(ref, err))
			}
			continue
		}
		values, problem := readValuesDocument(ref, data)
		if problem != "" {
			r.problem(file, ref, "%s", problem)
			continue
		}
		merged = transform.MergeMaps(merged, values)
	}
	return transform.MergeMaps(merged, kdu.Params), secretVersions, origins, nil
}

// read returns the data of the reference's key; ok is false when there is none to merge
// (skipped, or a problem recorded).
func (r *valuesResolver) read(ctx context.Context, file string, ref ValuesReference) (data []byte, version string, ok bool, err error) {
	id := ref.Kind + "/" + ref.Name
	object, read := r.objects[id]
	if !read {
		if len(r.objects) >= MaxValuesObjects {
			r.problem(file, ref, "is one ConfigMap or Secret too many: a revision may read at most %d", MaxValuesObjects)
			return nil, "", false, nil
		}
		object = &resolvedObject{}
		object.object, object.found, err = r.get(ctx, ref.Kind, ref.Name)
		if err != nil {
			return nil, "", false, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
		}
		r.objects[id] = object
	}
	switch value, hasKey := object.object.Data[ref.ValuesKey]; {
	case !object.found && ref.Optional, object.found && !hasKey && ref.Optional:
		return nil, "", false, nil
	case !object.found:
		r.problem(file, ref, "names %s %s, which does not exist in the OsmDeployment's namespace", ref.Kind, ref.Name)
	case !hasKey:
		r.problem(file, ref, "names key %s, which %s %s does not have", ref.ValuesKey, ref.Kind, ref.Name)
	case len(value) > MaxValuesBytes:
		r.problem(file, ref, "reads %s, which is larger than the limit of %d bytes", ref, MaxValuesBytes)
	default:
		return value, object.object.Version, true, nil
	}
	return nil, "", false, nil
}

func (r *valuesResolver) problem(file string, ref ValuesReference, format string, args ...any) {
	r.problems = append(r.problems, problemf(file, ref.Line, "%s %s", "field "+fmt.Sprintf("%q", ref.Field), fmt.Sprintf(format, args...)))
}

// shown is the error to show for a reference: a Secret's error may quote the Secret, so it
// is not shown.
func (r *valuesResolver) shown(ref ValuesReference, err error) string {
	if ref.Kind == ValuesKindSecret {
		return "the value is not shown, as it comes from a Secret"
	}
	return err.Error()
}

// readValuesDocument reads a key's text as a YAML map of Helm values, with the bounds and
// types of a deployment file's params (no aliases, bounded nesting); null or empty is no
// values. The problem names the reference and never quotes a Secret.
func readValuesDocument(ref ValuesReference, data []byte) (map[string]any, string) {
	top, _, problems := decodeSingleDocument(ref.String(), data)
	if problems == nil && top != nil && top.Kind != yaml.MappingNode && top.ShortTag() != "!!null" {
		problems = []Problem{problemf(ref.String(), top.Line, "the document is %s; it must be a map of Helm values", describeNode(top))}
	}
	if problems == nil && top != nil && top.Kind == yaml.MappingNode {
		value, valueProblems := jsonValue(ref.String(), "", top)
		if valueProblems == nil {
			return value.(map[string]any), ""
		}
		problems = valueProblems
	}
	if problems == nil {
		return map[string]any{}, ""
	}
	if ref.Kind == ValuesKindSecret {
		return nil, fmt.Sprintf("reads %s, which is not a YAML map of Helm values (line %d; the error is not shown, as it comes from a Secret)", ref, problems[0].Line)
	}
	return nil, fmt.Sprintf("reads %s, which is not a YAML map of Helm values: %s", ref, problems[0].String())
}

// setPathValue sets text at the path of values as helm-controller's ReplacePathValue does:
// Helm's strvals parser (the --set syntax) types the value (true, 12, null), except a text in
// single or double quotes, which is set as a string without its quotes.
func setPathValue(values map[string]any, path, text string) error {
	quoted := len(text) >= 2 && (text[0] == '"' && text[len(text)-1] == '"' || text[0] == '\'' && text[len(text)-1] == '\'')
	if quoted {
		return strvals.ParseIntoString(path+"="+strings.Trim(text, `"'`), values)
	}
	return strvals.ParseInto(path+"="+text, values)
}

// withDigestKey keys the instance's digest with the versions of the Secrets it read (kept with
// any key it already has), so that its digest changes when they do and tells nothing of them.
func (n NsInstance) withDigestKey(versions ...string) NsInstance {
	if len(versions) == 0 {
		return n
	}
	hash := sha256.New()
	hash.Write(n.digestKey)
	for _, version := range slices.Sorted(slices.Values(versions)) {
		hash.Write([]byte(version + "\x00"))
	}
	n.digestKey = hash.Sum(nil)
	return n
}
