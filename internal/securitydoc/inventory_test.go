package securitydoc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
)

// repoRoot is the repository's root, from this package's folder (where go test runs).
const repoRoot = "../.."

// inventoryFile is the inventory, relative to repoRoot.
const inventoryFile = "docs/security.md"

// The columns every table of the inventory has, the field's first.
var inventoryColumns = []string{"field", "bound", "reach", "shown", "test"}

// kubernetesInputs are what the operator reads of Secrets, ConfigMaps and other objects a
// tenant writes: the keys it reads by name, and "*" for every key of an object.
var kubernetesInputs = []string{
	"Secret credentialsSecretRef." + gitopsv1alpha1.UsernameSecretKey,
	"Secret credentialsSecretRef." + gitopsv1alpha1.PasswordSecretKey,
	"Secret caSecretRef." + gitopsv1alpha1.CASecretKey,
	"ConfigMap valuesFrom[].valuesKey",
	"Secret valuesFrom[].valuesKey",
	"ConfigMap substituteFrom[].*",
	"Secret substituteFrom[].*",
	"object healthChecks[]",
}

// artifactInputs are what the operator reads of a Flux source (GitRepository, OCIRepository,
// Bucket) and of the artifact it points at.
var artifactInputs = []string{
	"source status.artifact.url",
	"source status.artifact.digest",
	"source status.artifact.revision",
	"source status.conditions",
	"artifact tarball",
	"artifact files",
}

// answerFieldsOutsideTheirType are the fields of an answer read by a custom UnmarshalJSON, which
// reflection on the type does not see.
var answerFieldsOutsideTheirType = []string{
	"Operation detailed-status", // the other spelling of detailedStatus
}

// requestBodies are the types of internal/osm with JSON fields that only requests carry.
var requestBodies = []string{"NSInstanceCreate"}

// inventoryRow is a row of one of the inventory's tables.
type inventoryRow struct {
	line  int
	key   string
	cells map[string]string
}

// TestEveryTenantInputHasARow holds docs/security.md to the inputs: every field of the CRDs'
// specs, of the repository format, every key of a Secret or ConfigMap, every field of the source
// artifacts and of the NBI answers has a row, with its bound, reach, display and test; every row
// names one of them; and every test a row names exists.
func TestEveryTenantInputHasARow(t *testing.T) {
	rows := readInventory(t)
	required, allowed := map[string]bool{}, map[string]bool{}
	addCRDFields(t, required, allowed)
	addRepositoryFields(required, allowed)
	addAnswerFields(t, required, allowed)
	for _, key := range slices.Concat(kubernetesInputs, artifactInputs, answerFieldsOutsideTheirType) {
		required[key], allowed[key] = true, true
	}

	for _, key := range sortedKeys(required) {
		if _, ok := rows[key]; !ok {
			t.Errorf("%s has no row for `%s`: write its bound, what it reaches, how it is shown and the test that holds it", inventoryFile, key)
		}
	}
	tests := readTestNames(t)
	for _, key := range sortedKeys(rows) {
		row := rows[key]
		if !allowed[key] {
			t.Errorf("%s:%d: `%s` is no field the operator reads: remove the row or correct its name", inventoryFile, row.line, key)
		}
		for _, column := range inventoryColumns[1:] {
			if strings.TrimSpace(row.cells[column]) == "" {
				t.Errorf("%s:%d: `%s` has an empty %s cell (write none where there is none)", inventoryFile, row.line, key, column)
			}
		}
		checkTestReferences(t, row, tests)
	}
}

// readInventory reads the rows of every table of the inventory whose columns are
// inventoryColumns, by their field.
func readInventory(t *testing.T) map[string]inventoryRow {
	data, err := os.ReadFile(filepath.Join(repoRoot, inventoryFile))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]inventoryRow{}
	var columns []string
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "|") {
			columns = nil
			continue
		}
		cells := tableCells(line)
		switch {
		case columns == nil:
			for _, cell := range cells {
				columns = append(columns, strings.ToLower(cell))
			}
			continue
		case strings.Trim(line, "|-: ") == "":
			continue
		case !slices.Equal(columns, inventoryColumns):
			continue
		case len(cells) != len(columns):
			t.Errorf("%s:%d: %d cells, want %d", inventoryFile, i+1, len(cells), len(columns))
			continue
		}
		field := cells[0]
		if len(field) < 3 || field[0] != '`' || field[len(field)-1] != '`' || strings.Count(field, "`") != 2 {
			t.Errorf("%s:%d: the field %q is not one path in backticks", inventoryFile, i+1, field)
			continue
		}
		row := inventoryRow{line: i + 1, key: field[1 : len(field)-1], cells: map[string]string{}}
		for j, column := range columns {
			row.cells[column] = cells[j]
		}
		if first, twice := rows[row.key]; twice {
			t.Errorf("%s:%d: `%s` has a row already at line %d", inventoryFile, row.line, row.key, first.line)
		}
		rows[row.key] = row
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table with the columns %v", inventoryFile, inventoryColumns)
	}
	return rows
}

// tableCells splits a Markdown table line into its trimmed cells.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// addCRDFields adds the spec fields of every version of the generated CRDs, as "<Kind> spec.<path>":
// a leaf, and a map or list whose children the schema does not name, is required; a map or
// list whose children it names may have a row too (for its count).
func addCRDFields(t *testing.T, required, allowed map[string]bool) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRD in config/crd/bases: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, version := range crd.Spec.Versions {
			spec, ok := version.Schema.OpenAPIV3Schema.Properties["spec"]
			if !ok {
				t.Fatalf("%s: version %s has no spec", file, version.Name)
			}
			walkSchema(crd.Spec.Names.Kind+" spec", spec, required, allowed)
		}
	}
}

func walkSchema(key string, schema apiextensionsv1.JSONSchemaProps, required, allowed map[string]bool) {
	allowed[key] = true
	switch {
	case len(schema.Properties) > 0:
		for name, child := range schema.Properties {
			walkSchema(key+"."+name, child, required, allowed)
		}
	case schema.Items != nil && schema.Items.Schema != nil && len(schema.Items.Schema.Properties) > 0:
		walkSchema(key+"[]", *schema.Items.Schema, required, allowed)
	default:
		required[key] = true
	}
}

// addRepositoryFields adds every field of gitops.Schema, as "<kind> <path>": the parser reads
// its fields from it.
func addRepositoryFields(required, allowed map[string]bool) {
	for kind, fields := range gitops.Schema {
		for _, field := range fields {
			key := string(kind) + " " + field.Path
			required[key], allowed[key] = true, true
		}
	}
}

// addAnswerFields adds the JSON fields of osm.AnswerTypes, nested ones too, as "<Type> <path>"
// ("NSInstance _admin.deployed.K8s[].kdu-name"): what is not a struct is required, a struct and
// a list of them may have a row. It also fails on a type of internal/osm with JSON fields that
// no answer type reaches and no request carries: an answer the list misses.
func addAnswerFields(t *testing.T, required, allowed map[string]bool) {
	reached := map[string]bool{}
	for _, answer := range osm.AnswerTypes {
		walkAnswer(answer.Name()+" ", "", answer, required, allowed, reached)
	}
	for _, name := range typesWithJSONFields(t, filepath.Join(repoRoot, "internal", "osm")) {
		if !reached[name] && !slices.Contains(requestBodies, name) {
			t.Errorf("internal/osm's %s has JSON fields, but no type of osm.AnswerTypes holds it: add its answer there, or it to requestBodies", name)
		}
	}
}

func walkAnswer(root, path string, typ reflect.Type, required, allowed, reached map[string]bool) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice && isStruct(typ.Elem()) {
		if typ.Kind() == reflect.Slice {
			path += "[]"
			allowed[root+path] = true
		}
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		required[root+path] = true
		return
	}
	reached[typ.Name()] = true
	for _, field := range reflect.VisibleFields(typ) {
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		if field.Anonymous || !field.IsExported() || name == "" || name == "-" {
			continue
		}
		child := name
		if path != "" {
			child = path + "." + name
		}
		allowed[root+child] = true
		walkAnswer(root, child, field.Type, required, allowed, reached)
	}
}

func isStruct(typ reflect.Type) bool {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ.Kind() == reflect.Struct
}

// typesWithJSONFields names the struct types declared at the top of the Go files of dir (tests
// left out) that have a field with a json tag.
func typesWithJSONFields(t *testing.T, dir string) []string {
	var names []string
	for _, file := range parseGoFiles(t, dir) {
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gen.Specs {
				typeSpec, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				if structType, ok := typeSpec.Type.(*ast.StructType); ok && len(structTags(structType, "json")) > 0 {
					names = append(names, typeSpec.Name.Name)
				}
			}
		}
	}
	return names
}

func parseGoFiles(t *testing.T, dir string) []*ast.File {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	return files
}

// structTags returns the names the fields of a struct type have under key ("json", "yaml").
func structTags(structType *ast.StructType, key string) []string {
	var names []string
	for _, field := range structType.Fields.List {
		if field.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(field.Tag.Value)
		if err != nil {
			continue
		}
		if name, _, _ := strings.Cut(reflect.StructTag(tag).Get(key), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// TestPackageSchemaIsWhatOsmpkgReads holds gitops.Schema's package fields to what internal/osmpkg's
// descriptor reader reads (its yaml tags and the keys it looks up by name), the one part of the
// repository format whose parser does not read its fields from the schema.
func TestPackageSchemaIsWhatOsmpkgReads(t *testing.T) {
	inSchema := map[string]bool{}
	for _, field := range gitops.Schema[gitops.PackageKind] {
		if strings.HasPrefix(field.Path, "<") {
			continue
		}
		for segment := range strings.SplitSeq(field.Path, ".") {
			inSchema[strings.TrimSuffix(segment, "[]")] = true
		}
	}
	read, literals := map[string]bool{}, map[string]bool{}
	for _, file := range parseGoFiles(t, filepath.Join(repoRoot, "internal", "osmpkg")) {
		ast.Inspect(file, func(node ast.Node) bool {
			switch node := node.(type) {
			case *ast.StructType:
				for _, name := range structTags(node, "yaml") {
					read[name] = true
				}
			case *ast.CallExpr:
				// mappingValue(node, "key") and lineOf(node, "key") look a key up by name.
				if name, ok := node.Fun.(*ast.Ident); ok && (name.Name == "mappingValue" || name.Name == "lineOf") && len(node.Args) == 2 {
					if key, ok := stringLiteral(node.Args[1]); ok {
						read[key] = true
					}
				}
			case *ast.BasicLit:
				if text, ok := stringLiteral(node); ok {
					literals[text] = true
				}
			}
			return true
		})
	}
	for _, name := range sortedKeys(read) {
		if !inSchema[name] {
			t.Errorf("internal/osmpkg reads the descriptor field %q, which gitops.Schema's package fields lack", name)
		}
	}
	for _, name := range sortedKeys(inSchema) {
		if !read[name] && !literals[name] {
			t.Errorf("gitops.Schema's package fields name %q, which internal/osmpkg does not read", name)
		}
	}
}

func stringLiteral(expr ast.Expr) (string, bool) {
	literal, ok := expr.(*ast.BasicLit)
	if !ok || literal.Kind != token.STRING {
		return "", false
	}
	text, err := strconv.Unquote(literal.Value)
	return text, err == nil
}

// testNames are the Go test functions and the texts of string literals of the repository's
// _test.go files.
type testNames struct {
	functions map[string]bool
	sources   []string
}

var testFunction = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w+)\(`)

func readTestNames(t *testing.T) testNames {
	names := testNames{functions: map[string]bool{}}
	err := filepath.WalkDir(repoRoot, func(path string, entry fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case entry.IsDir() && path != repoRoot && (strings.HasPrefix(entry.Name(), ".") || slices.Contains([]string{"bin", "testdata", "node_modules", "dist"}, entry.Name())):
			return filepath.SkipDir
		case entry.IsDir() || !strings.HasSuffix(path, "_test.go"):
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, match := range testFunction.FindAllStringSubmatch(string(data), -1) {
			names.functions[match[1]] = true
		}
		names.sources = append(names.sources, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A test a row names: a Go test function in backticks (`TestX`, `TestX/its case`) anywhere in the
// row, or an envtest spec's description in double quotes in the test cell; either may be
// followed by "(pending)" while the change that brings it is under way.
var (
	functionReference = regexp.MustCompile("`((?:Test|Fuzz|Benchmark)\\w+)(?:/[^`]*)?`( \\(pending\\))?")
	specReference     = regexp.MustCompile(`"([^"]+)"( \(pending\))?`)
)

func checkTestReferences(t *testing.T, row inventoryRow, tests testNames) {
	for _, column := range inventoryColumns[1:] {
		for _, match := range functionReference.FindAllStringSubmatch(row.cells[column], -1) {
			checkExists(t, row, match[1], match[2] != "", tests.functions[match[1]])
		}
	}
	test := row.cells["test"]
	for _, match := range specReference.FindAllStringSubmatch(test, -1) {
		quoted := strconv.Quote(match[1])
		checkExists(t, row, quoted, match[2] != "", slices.ContainsFunc(tests.sources, func(source string) bool {
			return strings.Contains(source, quoted)
		}))
	}
	if test != "none" && !functionReference.MatchString(test) && !specReference.MatchString(test) {
		t.Errorf("%s:%d: `%s` names no test: write `TestX`, a spec's \"description\", or none", inventoryFile, row.line, row.key)
	}
}

func checkExists(t *testing.T, row inventoryRow, name string, pending, exists bool) {
	switch {
	case exists && pending:
		t.Logf("%s:%d: %s exists now: drop its (pending)", inventoryFile, row.line, name)
	case pending:
		t.Logf("%s:%d: %s is pending: no _test.go holds it yet", inventoryFile, row.line, name)
	case !exists:
		t.Errorf("%s:%d: `%s` names %s, which no _test.go file holds", inventoryFile, row.line, row.key, name)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
