package nbispec

import (
	"testing"
)

const tinySpec = `
openapi: 3.0.0
paths:
  '/nslcm/v1/ns_instances/{nsInstanceId}':
    parameters:
      - name: nsInstanceId
    get:
      responses:
        '200': {description: OK}
        '404': {description: not found}
        default: {description: anything}
    delete:
      responses:
        '204': {description: deleted}
        '5XX': {description: server error}
  '/nslcm/v1/ns_instances/special':
    get:
      responses:
        '202': {description: accepted}
`

func TestTinySpec(t *testing.T) {
	spec, err := Parse([]byte(tinySpec))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		documented   bool
		status       int
		statusOK     bool
	}{
		{"GET", "/nslcm/v1/ns_instances/{id}", true, 200, true},
		{"get", "/nslcm/v1/ns_instances/123", true, 404, true},
		{"GET", "/nslcm/v1/ns_instances/123", true, 500, false}, // "default" documents nothing
		{"DELETE", "/nslcm/v1/ns_instances/{x}", true, 503, true},
		{"DELETE", "/nslcm/v1/ns_instances/{x}", true, 404, false},
		{"POST", "/nslcm/v1/ns_instances/123", false, 201, false},
		{"GET", "/nslcm/v1/ns_instances", false, 200, false},
		{"GET", "/nslcm/v1/ns_instances/123/extra", false, 200, false},
		// The literal route wins over the template.
		{"GET", "/nslcm/v1/ns_instances/special", true, 202, true},
		{"GET", "/nslcm/v1/ns_instances/special", true, 200, false},
		// A template matches only a template.
		{"DELETE", "/nslcm/v1/{x}/{y}", false, 204, false},
	}
	for _, test := range tests {
		if got := spec.Documented(test.method, test.path); got != test.documented {
			t.Errorf("Documented(%s %s) = %v, want %v", test.method, test.path, got, test.documented)
		}
		if got := spec.StatusDocumented(test.method, test.path, test.status); got != test.statusOK {
			t.Errorf("StatusDocumented(%s %s, %d) = %v, want %v", test.method, test.path, test.status, got, test.statusOK)
		}
	}
}

func TestOSMSpec(t *testing.T) {
	spec, err := OSM()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		status       int
		want         bool
	}{
		{"POST", "/admin/v1/tokens", 200, true},
		{"POST", "/nslcm/v1/ns_instances/{nsInstanceId}/action", 202, true},
		{"DELETE", "/nslcm/v1/ns_instances_content/{id}", 202, true},
		{"POST", "/nslcm/v1/ns_instances/{nsInstanceId}/update", 202, false},
		{"GET", "/version", 200, false},
	}
	for _, test := range tests {
		if got := spec.StatusDocumented(test.method, test.path, test.status); got != test.want {
			t.Errorf("StatusDocumented(%s %s, %d) = %v, want %v", test.method, test.path, test.status, got, test.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	if _, err := Parse([]byte("openapi: 3.0.0\n")); err == nil {
		t.Error("Parse of a document without paths: no error")
	}
	if _, err := Parse([]byte("paths: [")); err == nil {
		t.Error("Parse of bad YAML: no error")
	}
}
