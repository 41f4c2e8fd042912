package osmpkg

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Kind tells a VNF/KNF package from an NS package.
type Kind string

const (
	// KindVNF is a VNF/KNF package: its descriptor has a top-level `vnfd:` key.
	KindVNF Kind = "vnf"
	// KindNS is an NS package: its descriptor has a top-level `nsd: {nsd: [...]}`.
	KindNS Kind = "ns"
)

// KDU is a Kubernetes deployment unit of a VNF descriptor.
type KDU struct {
	// Name is the KDU name (`kdu[].name`).
	Name string
	// HelmChart is `kdu[].helm-chart`; empty for a KDU made from a Juju bundle.
	HelmChart string
}

// VnfProfile is an entry of an NS descriptor's `df[*].vnf-profile[*]`.
type VnfProfile struct {
	// ID is the profile id, which NS instances use as the member-vnf-index.
	ID string
	// VnfdID is the `id` of the VNF descriptor the profile instantiates.
	VnfdID string
}

// Descriptor is what the operator needs from a VNF or NS descriptor.
type Descriptor struct {
	Kind Kind
	// ID is the descriptor id, unique per project in OSM.
	ID string
	// Name is the NSD `name` or the VNFD `product-name`.
	Name    string
	Version string
	// IDLine is the line of the descriptor id in its file; 0 for descriptors OSM reports.
	IDLine int
	// SoftwareVersion is a VNF descriptor's software-version ("" when absent; OSM reads
	// "1.0" then). OSM refuses most changes to a VNFD in use unless it changes.
	SoftwareVersion string
	// SoftwareVersionLine is its line in the descriptor file, 0 when absent.
	SoftwareVersionLine int
	// KDUs lists a VNF descriptor's KDUs (VNF only).
	KDUs []KDU
	// HasVDUList says that a VNF descriptor has a `vdu` list, which OSM's LCM reads when it
	// redeploys the VNF (VNF only).
	HasVDUList bool
	// VnfdIDs is an NS descriptor's `vnfd-id` list: the VNF packages it needs (NS only).
	VnfdIDs []string
	// VnfdIDLines are the lines of the VnfdIDs in the descriptor file, so that a problem with
	// one can point at it; none for descriptors OSM reports.
	VnfdIDLines []int
	// VnfProfiles lists the vnf-profiles of all of an NS descriptor's deployment flavours (NS only).
	VnfProfiles []VnfProfile
}

// IsKNF says that a VNF descriptor describes a Kubernetes network function: KDUs and no `vdu`
// list.
func (d *Descriptor) IsKNF() bool {
	return d.Kind == KindVNF && len(d.KDUs) > 0 && !d.HasVDUList
}

// descriptorEnvelopes are the top-level keys the NBI unwraps (its
// _remove_envelop), with the kind each one announces.
var descriptorEnvelopes = []struct {
	key  string
	kind Kind
}{
	{"vnfd", KindVNF},
	{"etsi-nfv-vnfd:vnfd", KindVNF},
	{"nsd", KindNS},
	{"etsi-nfv-nsd:nsd", KindNS},
}

// parseDescriptor reads a VNFD or NSD (YAML or JSON). Its *Error names the wrong field and,
// when known, its line; callers add the package and file to it.
func parseDescriptor(data []byte) (*Descriptor, *Error) {
	root, err := parseYAMLMapping(data)
	if err != nil {
		return nil, err
	}
	key, body := descriptorEnvelope(root)
	if body == nil {
		return nil, &Error{Line: root.Line, Message: "no top-level vnfd or nsd key: not an OSM descriptor"}
	}
	if body.Kind != yaml.MappingNode {
		return nil, &Error{Line: body.Line, Message: key + " must be a map"}
	}
	if kindOfEnvelope(key) == KindVNF {
		return parseVNFD(key, body)
	}
	return parseNSD(key, body)
}

// isDescriptor tells whether data is a YAML or JSON document with a
// descriptor's top-level key, whatever the rest of it holds.
func isDescriptor(data []byte) bool {
	root, err := parseYAMLMapping(data)
	if err != nil {
		return false
	}
	_, body := descriptorEnvelope(root)
	return body != nil
}

// Bounds on the YAML of a descriptor, which comes from a tenant's repository (Build) or an
// upload (Inspect). MaxDescriptorBytes bounds the node tree yaml.v3 builds; these bound what
// is made of the tree afterwards: Node.Decode expands aliases (yaml.v3 stops it only past a
// ratio of them), and the Descriptor keeps an entry for each KDU, vnfd-id and vnf-profile. internal/gitops bounds deployment files alike, but this package is a leaf
// that imports no osmops package (.golangci.yml's depguard "leaves"), and gitops builds on it,
// so it checks its own descriptors here.
const (
	// maxDescriptorDepth bounds nesting; real SOL006 descriptors nest about 13 levels.
	maxDescriptorDepth = 64
	// descriptorNodeBytes is what each node (key, value, list item) counts toward a
	// descriptor's parsed size, with twice its text: the same measure as a deployment file's.
	descriptorNodeBytes = 48
	// maxDescriptorParsedBytes bounds that parsed size. Real descriptors count 5 to 7 times
	// their text (those of testdata 4.9 and 6.8), so that one of MaxDescriptorBytes fits; 1 MiB
	// of tiny items counts up to 24 MiB.
	maxDescriptorParsedBytes = 8 << 20
)

// parseYAMLMapping parses data, within the bounds above, and returns its top-level map.
func parseYAMLMapping(data []byte) (*yaml.Node, *Error) {
	if len(data) > MaxDescriptorBytes {
		return nil, &Error{Message: fmt.Sprintf("larger than %d MiB (%d bytes): a descriptor may be at most that large",
			MaxDescriptorBytes>>20, MaxDescriptorBytes)}
	}
	var document yaml.Node
	if err := yaml.Unmarshal(data, &document); err != nil {
		return nil, yamlError("", err)
	}
	if document.Kind != yaml.DocumentNode || len(document.Content) == 0 {
		return nil, &Error{Message: "empty document: expected a top-level vnfd or nsd key"}
	}
	root := document.Content[0]
	if problem := checkDescriptorTree(root); problem != nil {
		return nil, problem
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Line: root.Line, Message: "the document must be a map with a top-level vnfd or nsd key"}
	}
	return root, nil
}

// checkDescriptorTree refuses, in document order, an alias, nesting deeper than
// maxDescriptorDepth and a parsed size over maxDescriptorParsedBytes. It walks with a stack of
// its own (a node and its next child a level) rather than by recursion, so that it holds at
// most maxDescriptorDepth levels however deep or wide the tree.
func checkDescriptorTree(root *yaml.Node) *Error {
	size := 0
	check := func(node *yaml.Node, depth int) *Error {
		switch {
		case node.Kind == yaml.AliasNode:
			return &Error{Line: node.Line, Message: fmt.Sprintf("YAML aliases (*%s) are not allowed in a descriptor", node.Value)}
		case depth > maxDescriptorDepth:
			return &Error{Line: node.Line, Message: fmt.Sprintf("the YAML is nested deeper than %d levels: a descriptor may be at most that deep",
				maxDescriptorDepth)}
		}
		size += descriptorNodeBytes + 2*len(node.Value)
		if size > maxDescriptorParsedBytes {
			return &Error{Line: node.Line, Message: fmt.Sprintf("from this line on the descriptor is larger than %d MiB once parsed "+
				"(%d bytes a key, value or list item, and twice its text): a descriptor may be at most that large",
				maxDescriptorParsedBytes>>20, descriptorNodeBytes)}
		}
		return nil
	}
	if problem := check(root, 1); problem != nil {
		return problem
	}
	type level struct {
		node *yaml.Node
		next int
	}
	stack := []level{{node: root}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(top.node.Content) {
			stack = stack[:len(stack)-1]
			continue
		}
		child := top.node.Content[top.next]
		top.next++
		if problem := check(child, len(stack)+1); problem != nil {
			return problem
		}
		stack = append(stack, level{node: child})
	}
	return nil
}

// descriptorEnvelope finds the first descriptor key of root and returns it
// with its value node; a nil node means there is none.
func descriptorEnvelope(root *yaml.Node) (string, *yaml.Node) {
	for _, envelope := range descriptorEnvelopes {
		if value := mappingValue(root, envelope.key); value != nil {
			return envelope.key, value
		}
	}
	return "", nil
}

func kindOfEnvelope(key string) Kind {
	for _, envelope := range descriptorEnvelopes {
		if envelope.key == key {
			return envelope.kind
		}
	}
	return ""
}

// mappingValue returns the value of key in a mapping node, or nil.
func mappingValue(mapping *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		if mapping.Content[i].Value == key {
			return mapping.Content[i+1]
		}
	}
	return nil
}

// vnfdFields are the VNFD fields the operator reads; yaml.v3 decodes any
// scalar into a string, so `version: 1.0` reads as "1.0".
type vnfdFields struct {
	ID              string      `yaml:"id"`
	ProductName     string      `yaml:"product-name"`
	Version         string      `yaml:"version"`
	SoftwareVersion string      `yaml:"software-version"`
	KDUs            []yaml.Node `yaml:"kdu"`
}

type kduFields struct {
	Name      string `yaml:"name"`
	HelmChart string `yaml:"helm-chart"`
}

func parseVNFD(key string, body *yaml.Node) (*Descriptor, *Error) {
	var fields vnfdFields
	if err := decodeNode(key, body, &fields); err != nil {
		return nil, err
	}
	if fields.ID == "" {
		return nil, &Error{Line: body.Line, Message: key + ".id is missing"}
	}
	descriptor := &Descriptor{Kind: KindVNF, ID: fields.ID, Name: fields.ProductName, Version: fields.Version,
		IDLine: lineOf(body, "id"), SoftwareVersion: fields.SoftwareVersion, SoftwareVersionLine: lineOf(body, "software-version"),
		HasVDUList: mappingValue(body, "vdu") != nil}
	for i := range fields.KDUs {
		field := fmt.Sprintf("%s.kdu[%d]", key, i)
		var kdu kduFields
		if err := decodeNode(field, &fields.KDUs[i], &kdu); err != nil {
			return nil, err
		}
		if kdu.Name == "" {
			return nil, &Error{Line: fields.KDUs[i].Line, Message: field + ".name is missing"}
		}
		if kdu.HelmChart != "" {
			if err := ValidateHelmChart(kdu.HelmChart); err != nil {
				return nil, &Error{Line: fields.KDUs[i].Line, Message: field + ".helm-chart: " + err.Error()}
			}
		}
		descriptor.KDUs = append(descriptor.KDUs, KDU(kdu))
	}
	return descriptor, nil
}

// nsdFields are the NSD fields the operator reads.
type nsdFields struct {
	ID      string   `yaml:"id"`
	Name    string   `yaml:"name"`
	Version string   `yaml:"version"`
	VnfdIDs []string `yaml:"vnfd-id"`
	DFs     []struct {
		VnfProfiles []struct {
			ID     string `yaml:"id"`
			VnfdID string `yaml:"vnfd-id"`
		} `yaml:"vnf-profile"`
	} `yaml:"df"`
}

// parseNSD reads `nsd: {nsd: [ONE]}`; like the NBI it also takes the NSD
// directly under the top-level key when there is no inner `nsd` list.
func parseNSD(key string, body *yaml.Node) (*Descriptor, *Error) {
	field, nsd := key, body
	if inner := mappingValue(body, "nsd"); inner != nil {
		field = key + ".nsd"
		if inner.Kind != yaml.SequenceNode || len(inner.Content) != 1 {
			return nil, &Error{Line: inner.Line, Message: field + " must be a list of only one element"}
		}
		field += "[0]"
		nsd = inner.Content[0]
	}
	var fields nsdFields
	if err := decodeNode(field, nsd, &fields); err != nil {
		return nil, err
	}
	if fields.ID == "" {
		return nil, &Error{Line: nsd.Line, Message: field + ".id is missing"}
	}
	descriptor := &Descriptor{Kind: KindNS, ID: fields.ID, Name: fields.Name, Version: fields.Version, VnfdIDs: fields.VnfdIDs,
		IDLine: lineOf(nsd, "id")}
	if ids := mappingValue(nsd, "vnfd-id"); ids != nil && ids.Kind == yaml.SequenceNode {
		for _, id := range ids.Content {
			descriptor.VnfdIDLines = append(descriptor.VnfdIDLines, id.Line)
		}
	}
	for _, df := range fields.DFs {
		for _, profile := range df.VnfProfiles {
			descriptor.VnfProfiles = append(descriptor.VnfProfiles, VnfProfile(profile))
		}
	}
	return descriptor, nil
}

// lineOf is the line of a mapping's value for key, 0 when it has none.
func lineOf(mapping *yaml.Node, key string) int {
	if value := mappingValue(mapping, key); value != nil {
		return value.Line
	}
	return 0
}

// decodeNode decodes node into out and turns a type mismatch into an *Error
// that names the field and the line.
func decodeNode(field string, node *yaml.Node, out any) *Error {
	if node.Kind != yaml.MappingNode {
		return &Error{Line: node.Line, Message: field + " must be a map"}
	}
	if err := node.Decode(out); err != nil {
		return yamlError(field, err)
	}
	return nil
}

// yamlLinePrefix matches the "line N: " that yaml.v3 puts in its messages;
// it has no structured position, so the line is read back from the text.
var yamlLinePrefix = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlError turns a yaml.v3 error into an *Error with the line it reports.
func yamlError(field string, err error) *Error {
	message := err.Error()
	var typeError *yaml.TypeError
	if errors.As(err, &typeError) && len(typeError.Errors) > 0 {
		message = typeError.Errors[0]
	}
	result := &Error{Message: "invalid YAML: " + strings.TrimPrefix(message, "yaml: ")}
	if match := yamlLinePrefix.FindStringSubmatch(message); match != nil {
		result.Line, _ = strconv.Atoi(match[1])
		result.Message = "invalid YAML: " + message[len(match[0]):]
	}
	if field != "" {
		result.Message = field + ": " + result.Message
	}
	return result
}

// helmChartReference is the NBI's valid_helm_chart_re (osm_nbi/descriptor_topics.py):
// "name" or "repo/name", lower-case, no version.
var helmChartReference = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9]/)?([a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// ValidateHelmChart accepts what the NBI accepts: "repo/name" (or a bare
// chart name) or a URL with a scheme and a host, such as an http(s) chart
// address. It rejects "repo/name:version" and anything else with the NBI's
// wording.
func ValidateHelmChart(chart string) error {
	if helmChartReference.MatchString(chart) {
		return nil
	}
	// The NBI's is_url: urlparse() gives both a scheme and a network location.
	if parsed, err := url.Parse(chart); err == nil && parsed.Scheme != "" && parsed.Host != "" {
		return nil
	}
	return fmt.Errorf("helm-chart '%s' is not valid", chart)
}
