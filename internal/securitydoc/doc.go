// Package securitydoc keeps docs/security.md, the inventory of the inputs a tenant controls,
// complete and true to the code. It holds no code: its test walks the CRDs' OpenAPI schemas
// (config/crd/bases), the repository format's schema (gitops.Schema, which the parser reads
// its fields from), the keys read from Secrets and ConfigMaps, the source artifacts and the
// types NBI answers are decoded into (osm.AnswerTypes), and fails on a field without a row, a
// row without a field, an empty cell, or a test named there that no _test.go file holds.
//
// It lives apart because it needs all of them at once, with the documents; no package imports it.
package securitydoc
