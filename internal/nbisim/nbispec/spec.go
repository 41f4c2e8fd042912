// Package nbispec reads OSM's OpenAPI description of its north-bound
// interface (NBI) and answers, for tests, whether a method and path are
// documented and whether a status code is documented for them.
//
// Paths are those of the OpenAPI file, without the /osm prefix the live NBI
// adds. A path may hold {name} templates; a template segment matches only a
// template segment of the specification, a concrete segment matches a
// template segment or the same literal.
//
// It imports no other osmops package.
package nbispec

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Spec is the documented operations of an OpenAPI file.
type Spec struct {
	operations []operation
}

type operation struct {
	method   string
	segments []string
	// statuses are the documented response codes; ranges such as "5XX" are
	// kept as written. "default" is left out: it would document everything.
	statuses []string
}

// document is the part of an OpenAPI file read here; a path item also
// holds non-operation members (parameters, summary), hence the nodes.
type document struct {
	Paths map[string]map[string]yaml.Node `yaml:"paths"`
}

type operationObject struct {
	Responses map[string]yaml.Node `yaml:"responses"`
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true}

// osmOpenAPI is OSM's own description of its NBI; README.md says where it comes from.
//
//go:embed osm-openapi.yaml
var osmOpenAPI []byte

// OSM returns the operations OSM's OpenAPI file documents.
func OSM() (*Spec, error) {
	spec, err := Parse(osmOpenAPI)
	if err != nil {
		return nil, fmt.Errorf("osm-openapi.yaml: %w", err)
	}
	return spec, nil
}

// Parse reads an OpenAPI document.
func Parse(data []byte) (*Spec, error) {
	var doc document
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Paths) == 0 {
		return nil, fmt.Errorf("no paths")
	}
	spec := &Spec{}
	for path, methods := range doc.Paths {
		for method, node := range methods {
			if !httpMethods[method] {
				continue // parameters, summary...
			}
			var op operationObject
			if err := node.Decode(&op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			var statuses []string
			for status := range op.Responses {
				if status != "default" {
					statuses = append(statuses, strings.ToUpper(status))
				}
			}
			spec.operations = append(spec.operations, operation{
				method: strings.ToUpper(method), segments: splitPath(path), statuses: statuses,
			})
		}
	}
	return spec, nil
}

// Documented tells whether the specification has the method on the path.
func (s *Spec) Documented(method, path string) bool {
	return s.find(method, path) != nil
}

// StatusDocumented tells whether the specification documents the status as
// an answer of the method on the path, exactly or by a range such as 5XX.
func (s *Spec) StatusDocumented(method, path string, status int) bool {
	op := s.find(method, path)
	if op == nil {
		return false
	}
	code := strconv.Itoa(status)
	for _, documented := range op.statuses {
		if documented == code || len(documented) == 3 && strings.HasSuffix(documented, "XX") && documented[0] == code[0] {
			return true
		}
	}
	return false
}

// find returns the operation matching method and path; when several match,
// the one with the most literal segments, as routers pick.
func (s *Spec) find(method, path string) *operation {
	segments := splitPath(path)
	var best *operation
	bestLiterals := -1
	for i := range s.operations {
		op := &s.operations[i]
		if op.method != strings.ToUpper(method) {
			continue
		}
		if literals, ok := matchSegments(op.segments, segments); ok && literals > bestLiterals {
			best, bestLiterals = op, literals
		}
	}
	return best
}

// matchSegments matches a path against a specification path and counts the
// literal segments that matched.
func matchSegments(spec, path []string) (int, bool) {
	if len(spec) != len(path) {
		return 0, false
	}
	literals := 0
	for i := range spec {
		switch {
		case isTemplate(spec[i]):
		case isTemplate(path[i]) || spec[i] != path[i]:
			return 0, false
		default:
			literals++
		}
	}
	return literals, true
}

func isTemplate(segment string) bool {
	return strings.HasPrefix(segment, "{") && strings.HasSuffix(segment, "}")
}

// splitPath returns the non-empty segments of a URL path.
func splitPath(path string) []string {
	return strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
}
