package nbisim

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// The NBI validates request bodies with JSON schemas (osm_nbi/validation.py)
// and answers 422 with the first error Python's jsonschema reports. Only the
// few request bodies the simulator takes need checking, with the keywords
// their schemas use, so a small validator that words its errors like
// jsonschema does is used instead of a general JSON-schema library, whose
// messages would differ from the NBI's.

// schema is the subset of JSON schema the NBI's request schemas use.
type schema struct {
	// types lists the accepted JSON types ("object", "string", "integer",
	// "boolean", "array", "null"); empty accepts anything.
	types      []string
	minLength  int
	pattern    *regexp.Regexp
	enum       []string
	minimum    *int
	properties []property
	required   []string
	minProps   int
	closed     bool // additionalProperties: false
	items      *schema
	minItems   int
}

type property struct {
	name   string
	schema *schema
}

// Schemas of validation.py, reduced to what is checked here.
var (
	stringSchema   = &schema{types: []string{"string"}, minLength: 1}
	nameSchema     = &schema{types: []string{"string"}, minLength: 1, pattern: regexp.MustCompile(`^[^,;()'"]+$`)}
	idSchema       = &schema{types: []string{"string"}, pattern: regexp.MustCompile(`^[a-fA-F0-9]{8}(-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}$`)}
	objectSchema   = &schema{types: []string{"object"}}
	boolSchema     = &schema{types: []string{"boolean"}}
	integer1Schema = &schema{types: []string{"integer"}, minimum: new(1)}
	arraySchema    = &schema{types: []string{"array"}}
	anySchema      = &schema{}
)

var kduParamsSchema = &schema{
	types: []string{"object"},
	properties: []property{
		{"kdu_name", nameSchema},
		{"additionalParams", objectSchema},
		{"kdu_model", nameSchema},
		{"k8s-namespace", nameSchema},
		{"config-units", integer1Schema},
		{"kdu-deployment-name", nameSchema},
	},
	required: []string{"kdu_name"},
	minProps: 2,
	closed:   true,
}

var additionalParamsForVnfSchema = &schema{
	types: []string{"array"},
	items: &schema{
		types: []string{"object"},
		properties: []property{
			{"member-vnf-index", nameSchema},
			{"additionalParams", objectSchema},
			{"k8s-namespace", nameSchema},
			{"config-units", integer1Schema},
			{"additionalParamsForVdu", arraySchema},
			{"additionalParamsForKdu", &schema{types: []string{"array"}, items: kduParamsSchema}},
			{"affinity-or-anti-affinity-group", arraySchema},
		},
		required: []string{"member-vnf-index"},
		minProps: 2,
		closed:   true,
	},
}

// nsInstantiateSchema is ns_instantiate: the body of an NS create and of an
// instantiate operation.
var nsInstantiateSchema = &schema{
	types: []string{"object"},
	properties: []property{
		{"lcmOperationType", stringSchema},
		{"nsInstanceId", idSchema},
		{"netsliceInstanceId", idSchema},
		{"nsName", nameSchema},
		{"nsDescription", &schema{types: []string{"string", "null"}}},
		{"nsdId", idSchema},
		{"vimAccountId", idSchema},
		{"nsConfigTemplateId", idSchema},
		{"wimAccountId", anySchema},
		{"placement-engine", stringSchema},
		{"placement-constraints", objectSchema},
		{"additionalParamsForNs", objectSchema},
		{"additionalParamsForVnf", additionalParamsForVnfSchema},
		{"config-units", integer1Schema},
		{"k8s-namespace", nameSchema},
		{"ssh_keys", &schema{types: []string{"array"}, items: &schema{types: []string{"string"}}}},
		{"timeout_ns_deploy", integer1Schema},
		{"nsr_id", idSchema},
		{"vduImage", nameSchema},
		{"vnf", &schema{types: []string{"array"}, minItems: 1}},
		{"vld", &schema{types: []string{"array"}, minItems: 1}},
	},
	required: []string{"nsName", "nsdId", "vimAccountId"},
	closed:   true,
}

var nsActionSchema = &schema{
	types: []string{"object"},
	properties: []property{
		{"lcmOperationType", stringSchema},
		{"nsInstanceId", idSchema},
		{"member_vnf_index", nameSchema},
		{"vnf_member_index", nameSchema},
		{"vdu_id", nameSchema},
		{"vdu_count_index", &schema{types: []string{"integer"}, minimum: new(0)}},
		{"kdu_name", nameSchema},
		{"primitive", nameSchema},
		{"timeout_ns_action", integer1Schema},
		{"primitive_params", objectSchema},
	},
	required: []string{"primitive", "primitive_params"},
	closed:   true,
}

var nsScaleSchema = &schema{
	types: []string{"object"},
	properties: []property{
		{"lcmOperationType", stringSchema},
		{"nsInstanceId", idSchema},
		{"scaleType", &schema{enum: []string{"SCALE_VNF"}}},
		{"timeout_ns_scale", integer1Schema},
		{"scaleVnfData", &schema{
			types: []string{"object"},
			properties: []property{
				{"vnfInstanceId", nameSchema},
				{"scaleVnfType", &schema{enum: []string{"SCALE_OUT", "SCALE_IN"}}},
				{"scaleByStepData", &schema{
					types: []string{"object"},
					properties: []property{
						{"scaling-group-descriptor", nameSchema},
						{"member-vnf-index", nameSchema},
						{"scaling-policy", nameSchema},
					},
					required: []string{"scaling-group-descriptor", "member-vnf-index"},
					closed:   true,
				}},
			},
			required: []string{"scaleVnfType", "scaleByStepData"},
			closed:   true,
		}},
		{"scaleTime", stringSchema},
	},
	required: []string{"scaleType", "scaleVnfData"},
	closed:   true,
}

var nsTerminateSchema = &schema{
	types: []string{"object"},
	properties: []property{
		{"lcmOperationType", stringSchema},
		{"nsInstanceId", idSchema},
		{"autoremove", boolSchema},
		{"timeout_ns_terminate", integer1Schema},
		{"skip_terminate_primitives", boolSchema},
		{"netsliceInstanceId", idSchema},
	},
	closed: true,
}

var nsUpdateSchema = &schema{
	types: []string{"object"},
	properties: []property{
		{"lcmOperationType", stringSchema},
		{"nsInstanceId", idSchema},
		{"timeout_ns_update", integer1Schema},
		{"updateType", &schema{enum: []string{"CHANGE_VNFPKG", "REMOVE_VNF", "MODIFY_VNF_INFORMATION", "OPERATE_VNF", "VERTICAL_SCALE"}}},
		{"modifyVnfInfoData", objectSchema},
		{"removeVnfInstanceId", idSchema},
		{"changeVnfPackageData", &schema{types: []string{"object"}, properties: []property{
			{"vnfInstanceId", idSchema},
			{"vnfdId", idSchema},
		}, required: []string{"vnfInstanceId", "vnfdId"}}},
		{"operateVnfData", objectSchema},
		{"verticalScaleVnf", objectSchema},
	},
	required: []string{"updateType"},
	closed:   true,
}

// adminItemSchema is the schema of a new admin item (VIM account, K8s
// cluster): the members they all take, then their own.
func adminItemSchema(required []string, own ...property) *schema {
	common := []property{
		{"schema_version", &schema{enum: []string{"1.0"}}},
		{"schema_type", &schema{types: []string{"string"}}},
		{"name", nameSchema},
		{"description", &schema{types: []string{"string", "null"}}},
	}
	return &schema{types: []string{"object"}, properties: append(common, own...), required: required, closed: true}
}

var vimAccountNewSchema = adminItemSchema(
	[]string{"name", "vim_url", "vim_type", "vim_user", "vim_password", "vim_tenant_name"},
	property{"vim", nameSchema},
	property{"datacenter", nameSchema},
	property{"vim_type", stringSchema},
	property{"vim_url", &schema{types: []string{"string", "null"}}},
	property{"vim_tenant_name", nameSchema},
	property{"vim_user", stringSchema},
	property{"vim_password", stringSchema},
	property{"vca", idSchema},
	property{"config", objectSchema},
	property{"prometheus-config", objectSchema},
)

var k8sClusterNewSchema = adminItemSchema(
	[]string{"name", "credentials", "vim_account", "k8s_version", "nets"},
	property{"credentials", objectSchema},
	property{"vim_account", idSchema},
	property{"k8s_version", stringSchema},
	property{"nets", objectSchema},
	property{"namespace", nameSchema},
	property{"cni", arraySchema},
	property{"deployment_methods", objectSchema},
)

// validationError is one schema violation: where (the path of keys and
// indexes) and jsonschema's message.
type validationError struct {
	path    []string
	message string
}

// formatError words e as validate_input does: "Format error at 'a:b' 'msg' ".
func (e validationError) formatError() string {
	position := ""
	if len(e.path) > 0 {
		position = "at '" + strings.Join(e.path, ":") + "'"
	}
	return fmt.Sprintf("Format error %s '%s' ", position, e.message)
}

// validate returns the error Python's jsonschema.validate would raise for
// value, or nil. Like its best_match, it prefers the shallowest error and,
// among those, the first found in schema keyword order (type, properties,
// required, minProperties, additionalProperties).
func (s *schema) validate(value any) *validationError {
	var errors []validationError
	s.collect(value, nil, &errors)
	var best *validationError
	for i := range errors {
		if best == nil || len(errors[i].path) < len(best.path) {
			best = &errors[i]
		}
	}
	return best
}

func (s *schema) collect(value any, path []string, errors *[]validationError) {
	fail := func(format string, args ...any) {
		*errors = append(*errors, validationError{path: path, message: fmt.Sprintf(format, args...)})
	}
	if len(s.types) > 0 && !s.acceptsType(value) {
		quoted := make([]string, len(s.types))
		for i, t := range s.types {
			quoted[i] = "'" + t + "'"
		}
		fail("%s is not of type %s", python.Repr(value), strings.Join(quoted, ", "))
		return
	}
	if len(s.enum) > 0 && !s.inEnum(value) {
		fail("%s is not one of %s", python.Repr(value), python.Repr(s.enum))
	}
	switch v := value.(type) {
	case string:
		if len([]rune(v)) < s.minLength {
			fail("%s is too short", python.Repr(v))
		}
		if s.pattern != nil && !s.pattern.MatchString(v) {
			fail("%s does not match %s", python.Repr(v), python.Repr(s.pattern.String()))
		}
	case json.Number:
		if i, err := v.Int64(); err == nil && s.minimum != nil && i < int64(*s.minimum) {
			fail("%s is less than the minimum of %d", python.Repr(v), *s.minimum)
		}
	case []any:
		if len(v) < s.minItems {
			fail("%s is too short", python.Repr(v))
		}
		if s.items != nil {
			for i, item := range v {
				s.items.collect(item, appendPath(path, fmt.Sprint(i)), errors)
			}
		}
	case *python.Dict:
		s.collectObject(v, path, errors, fail)
	}
}

func (s *schema) collectObject(o *python.Dict, path []string, errors *[]validationError, fail func(string, ...any)) {
	for _, p := range s.properties {
		if value, found := o.Get(p.name); found {
			p.schema.collect(value, appendPath(path, p.name), errors)
		}
	}
	for _, name := range s.required {
		if _, found := o.Get(name); !found {
			fail("%s is a required property", python.Repr(name))
		}
	}
	if len(o.Members) < s.minProps {
		fail("%s does not have enough properties", python.Repr(o))
	}
	if s.closed {
		var extras []string
		for _, key := range o.Keys() {
			if !s.hasProperty(key) {
				extras = append(extras, python.Repr(key))
			}
		}
		switch len(extras) {
		case 0:
		case 1:
			fail("Additional properties are not allowed (%s was unexpected)", extras[0])
		default:
			fail("Additional properties are not allowed (%s were unexpected)", strings.Join(extras, ", "))
		}
	}
}

func appendPath(path []string, element string) []string {
	return append(append([]string(nil), path...), element)
}

func (s *schema) acceptsType(value any) bool {
	for _, t := range s.types {
		if jsonType(value, t) {
			return true
		}
	}
	return false
}

func jsonType(value any, t string) bool {
	switch v := value.(type) {
	case *python.Dict:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case json.Number:
		_, err := v.Int64()
		return t == "number" || t == "integer" && err == nil
	}
	return false
}

func (s *schema) inEnum(value any) bool {
	text, isString := value.(string)
	for _, allowed := range s.enum {
		if isString && text == allowed {
			return true
		}
	}
	return false
}

func (s *schema) hasProperty(name string) bool {
	for _, p := range s.properties {
		if p.name == name {
			return true
		}
	}
	return false
}
