package gitops

import "strings"

// FileKind names a kind of file of a repository.
type FileKind string

// The kinds of file a revision holds.
const (
	// DeploymentFileKind is a deployment file: one NsInstance.
	DeploymentFileKind FileKind = KindNsInstance
	// SettingsFileKind is the first generation's settings file at the artifact root.
	SettingsFileKind FileKind = ConfigFileName
	// PackageKind is a package source folder: its name, its descriptor and its other files.
	PackageKind FileKind = "package"
)

// FieldType is what a field of a file holds.
type FieldType string

// The types of the fields of a file.
const (
	StringType FieldType = "string"
	BoolType   FieldType = "bool"
	// DurationType is a string Go's time.ParseDuration reads.
	DurationType FieldType = "duration"
	// MapType is a map whose keys are the fields below it.
	MapType FieldType = "map"
	// ListType is a list whose items are maps whose keys are the fields below it ("path[]").
	ListType FieldType = "list"
	// StringListType is a list of strings.
	StringListType FieldType = "string list"
	// StringMapType is a map of strings, any keys.
	StringMapType FieldType = "string map"
	// ValuesType is any YAML map: Helm values or OSM's parameters.
	ValuesType FieldType = "values"
	// FileType is a file or a folder of a package; its path names it ("<descriptor>").
	FileType FieldType = "file"
	// PresenceType is any YAML, of which only whether it is there is read.
	PresenceType FieldType = "presence"
)

// SchemaField is one field of a kind of file. Path is dotted from the top of the document, "[]"
// standing for the items of a list ("vnfs[].kdus[].name").
type SchemaField struct {
	Path string
	Type FieldType
}

// RepositorySchema lists the fields of each kind of file, each map or list before what it holds.
type RepositorySchema map[FileKind][]SchemaField

// Schema is the repository format (docs/repository-format.md): every field a revision's files
// may set. The deployment files' and the settings file's readers take their known fields from
// it, so that no field is read that it lacks. docs/security.md gives each its bound, what it
// reaches and how it is shown, and internal/securitydoc's test fails on a field without a row
// there: think each new field through before it is read.
var Schema = RepositorySchema{
	DeploymentFileKind: deploymentFileSchema(),
	SettingsFileKind: {
		{configTargetDir, StringType},
		{configFileExtensions, StringListType},
		{configConnectionFile, StringType},
	},
	// Read by internal/osmpkg (its descriptor's yaml tags, which internal/securitydoc holds to
	// these): the package's files, and what the operator reads of a VNFD (`vnfd:` or
	// `etsi-nfv-vnfd:vnfd:`) and of an NSD (`nsd: {nsd: [ONE]}`, `nsd:` or `etsi-nfv-nsd:nsd:`).
	PackageKind: {
		{"<folder>", FileType},
		{"<descriptor>", FileType},
		{"<files>", FileType},
		{"vnfd", MapType},
		{"vnfd.id", StringType},
		{"vnfd.product-name", StringType},
		{"vnfd.version", StringType},
		{"vnfd.software-version", StringType},
		{"vnfd.vdu", PresenceType},
		{"vnfd.kdu", ListType},
		{"vnfd.kdu[].name", StringType},
		{"vnfd.kdu[].helm-chart", StringType},
		{"nsd", MapType},
		{"nsd.nsd", ListType},
		{"nsd.nsd[].id", StringType},
		{"nsd.nsd[].name", StringType},
		{"nsd.nsd[].version", StringType},
		{"nsd.nsd[].vnfd-id", StringListType},
		{"nsd.nsd[].df", ListType},
		{"nsd.nsd[].df[].vnf-profile", ListType},
		{"nsd.nsd[].df[].vnf-profile[].id", StringType},
		{"nsd.nsd[].df[].vnf-profile[].vnfd-id", StringType},
	},
}

// deploymentFileSchema is the NsInstance file: the short form's kdu and the full form's
// vnfs[].kdus[] are one KDU map, listed once for both.
func deploymentFileSchema() []SchemaField {
	kduMap := []SchemaField{
		{"name", StringType},
		{"model", StringType},
		{"k8sNamespace", StringType},
		{"params", ValuesType},
		{"valuesFrom", ListType},
		{"valuesFrom[].kind", StringType},
		{"valuesFrom[].name", StringType},
		{"valuesFrom[].valuesKey", StringType},
		{"valuesFrom[].targetPath", StringType},
		{"valuesFrom[].optional", BoolType},
	}
	fields := []SchemaField{
		{"kind", StringType},
		{"metadata", MapType},
		{"metadata.annotations", StringMapType},
		{"metadata.labels", StringMapType},
		{"name", StringType},
		{"description", StringType},
		{"nsdName", StringType},
		{"vnfName", StringType},
		{"vimAccountName", StringType},
		{"kdu", MapType},
	}
	fields = append(fields, below("kdu", kduMap)...)
	fields = append(fields,
		SchemaField{"vnfs", ListType},
		SchemaField{"vnfs[].memberVnfIndex", StringType},
		SchemaField{"vnfs[].params", ValuesType},
		SchemaField{"vnfs[].k8sNamespace", StringType},
		SchemaField{"vnfs[].kdus", ListType},
	)
	fields = append(fields, below("vnfs[].kdus[]", kduMap)...)
	return append(fields,
		SchemaField{"params", ValuesType},
		SchemaField{"k8sNamespace", StringType},
		SchemaField{"deployTimeout", DurationType},
	)
}

// below puts fields under the map or list item at parent.
func below(parent string, fields []SchemaField) []SchemaField {
	placed := make([]SchemaField, len(fields))
	for i, field := range fields {
		placed[i] = SchemaField{Path: parent + "." + field.Path, Type: field.Type}
	}
	return placed
}

// fieldsOf returns the names of the fields directly in the map at parent of kind's files ("" for
// the top of the document, "vnfs[]" for an item of vnfs), in the schema's order.
func (s RepositorySchema) fieldsOf(kind FileKind, parent string) []string {
	prefix := ""
	if parent != "" {
		prefix = parent + "."
	}
	var names []string
	for _, field := range s[kind] {
		name, below := strings.CutPrefix(field.Path, prefix)
		if below && !strings.ContainsAny(name, ".[") {
			names = append(names, name)
		}
	}
	return names
}
