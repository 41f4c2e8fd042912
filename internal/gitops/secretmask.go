package gitops

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/osmops/osmops/internal/printable"
	"github.com/osmops/osmops/internal/pyjson"
)

// SecretMask is what a message shows instead of a value from a Secret.
const SecretMask = "<redacted: from a Secret>"

// minCutPrefix is the shortest start of a secret that masks the end of a text: a message cut
// to its bound may end inside a secret, and what is left of it must not show.
const minCutPrefix = 3

// minTypedLeaf is the shortest number or boolean of a Secret's YAML document that is masked: a
// password that YAML reads as a number (123456) is one, a replicaCount of 3 is configuration,
// and masking every "3" of a message would hide what it says.
const minTypedLeaf = 4

// MaskSecrets replaces in text each secret in every form a message may quote it: as is, quoted
// by Go (%q, with and without ASCII escapes), by JSON (Go's, Python's), by Python's repr, by
// YAML's single quotes, and escaped for display (printable.String), longest first so that a
// form containing another goes whole; a text that ends inside one (cut to a bound) has that
// end masked too. When in doubt it masks: a short secret masks its text wherever it appears.
func MaskSecrets(text string, secrets []string) string {
	forms := secretForms(secrets)
	for _, form := range forms {
		text = strings.ReplaceAll(text, form, SecretMask)
	}
	return maskCutTail(text, forms)
}

// secretForms are the texts MaskSecrets looks for, longest first.
func secretForms(secrets []string) []string {
	var forms []string
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		quoted, ascii, python, repr := strconv.Quote(secret), strconv.QuoteToASCII(secret), pyjson.Quote(secret), pyjson.Repr(secret)
		forms = append(forms, secret, printable.String(secret), quoted[1:len(quoted)-1], ascii[1:len(ascii)-1],
			python[1:len(python)-1], repr[1:len(repr)-1], strings.ReplaceAll(secret, "'", "''"))
		if encoded, err := json.Marshal(secret); err == nil {
			forms = append(forms, string(encoded[1:len(encoded)-1]))
		}
	}
	slices.SortFunc(forms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(forms)
}

// maskCutTail masks the end of text when it is the start of a form (before the "…" that a
// cut text ends with).
func maskCutTail(text string, forms []string) string {
	body, ellipsis := strings.CutSuffix(text, "…")
	suffix := ""
	if ellipsis {
		suffix = "…"
	}
	for _, form := range forms {
		for n := len(form) - 1; n >= minCutPrefix; n-- {
			if strings.HasSuffix(body, form[:n]) {
				return body[:len(body)-n] + SecretMask + suffix
			}
		}
	}
	return text
}

// SecretTexts are the texts of a Secret's data that a mask must hide: each value as it is
// and without its final newline, and, for a value that is a YAML document (valuesFrom reads
// Helm values so), each of its string leaves and each longer number or boolean: what OSM or
// Helm may quote of it once merged into a KDU's values.
func SecretTexts(data map[string][]byte) []string {
	var texts []string
	for _, value := range data {
		text := string(value)
		texts = append(texts, text, strings.TrimRight(text, "\r\n"))
		if len(value) > MaxValuesBytes {
			continue
		}
		// Decoded as values documents are (no aliases, bounded nesting): the Secret's data
		// is the tenant's.
		if top, _, problems := decodeSingleDocument("", value); problems == nil && top != nil && top.Kind == yaml.MappingNode {
			if document, problems := jsonValue("", "", top); problems == nil {
				texts = appendLeaves(texts, document)
			}
		}
	}
	slices.Sort(texts)
	return slices.Compact(texts)
}

// appendLeaves adds the maskable leaves of a decoded YAML document to texts.
func appendLeaves(texts []string, node any) []string {
	switch value := node.(type) {
	case map[string]any:
		for _, child := range value {
			texts = appendLeaves(texts, child)
		}
	case []any:
		for _, child := range value {
			texts = appendLeaves(texts, child)
		}
	case string:
		texts = append(texts, value)
	case nil:
	default:
		if text := fmt.Sprint(value); len(text) >= minTypedLeaf {
			texts = append(texts, text)
		}
	}
	return texts
}
