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

// Bounds on one Mask; a reconcile holds one, and a tenant whose Secrets need more is told so
// (MaskTooLargeError).
const (
	// MaxMaskBytes bounds what a Mask holds: the bytes of every form of its secrets, a start
	// shared by several forms counted once (a node of its automaton each, with its edge). It
	// bounds the memory of a Mask and the cost of linking it (docs/operations.md).
	MaxMaskBytes = 512 << 10
	// maxMaskReadBytes bounds the bytes of the forms a Mask reads to be built, shared starts
	// and repeated secrets counted each time: the cost of adding them.
	maxMaskReadBytes = 8 * MaxMaskBytes
)

// MaskTooLargeError: the values read from Secrets need more than MaxMaskBytes to be masked.
type MaskTooLargeError struct{}

func (*MaskTooLargeError) Error() string {
	return fmt.Sprintf("the values read from Secrets (every key of each Secret that substituteFrom and valuesFrom read) "+
		"take more than %d KiB to mask in every form a message may quote them: keep in Secrets only what is secret, "+
		"the rest in ConfigMaps", MaxMaskBytes>>10)
}

// Mask replaces in a text each secret it was given, in every form a message may quote it: as
// is, quoted by Go (%q, with and without ASCII escapes), by JSON (Go's, Python's), by Python's
// repr, by YAML's single quotes, and escaped for display (printable.String). Where forms
// overlap, it masks the whole of them; a text that ends inside one (cut to a bound) has that
// end masked too. When in doubt it masks: a short secret masks its text wherever it appears.
//
// It looks for every form at once with an Aho-Corasick automaton, linear in the text and in
// what it holds: a values document of many leaves makes many forms, and one search per form
// (strings.Replacer or ReplaceAll) would cost their number times every message. The Go
// Aho-Corasick modules served here compile a dense table of states by byte classes, whose size
// the Secret's bytes would choose; this one holds a node per byte of its forms. The zero Mask
// masks nothing.
type Mask struct {
	nodes  []maskNode
	edges  map[uint32]int32 // a node's index<<8 | byte -> its child
	read   int              // bytes of the forms added (maxMaskReadBytes)
	linked bool             // the fail links and longest suffixes hold for every node
}

// maskNode is one state: the start of one or more forms.
type maskNode struct {
	// fail is the node of the longest proper suffix of this one's bytes that starts a form.
	fail int32
	// depth is the length of this node's bytes.
	depth int32
	// longest is the length of the longest form that ends this node's bytes (0: none).
	longest int32
	// parent and label are the node this one follows and the byte that leads here.
	parent int32
	label  byte
}

// Add adds secrets to what m masks. Past a bound it stops and returns a *MaskTooLargeError;
// m then masks what it was given before and part of secrets.
func (m *Mask) Add(secrets []string) error {
	// Sized for the secrets as they are at once (at most to the bound): growing by appends
	// would allocate several times what is held.
	size := 0
	for _, secret := range secrets {
		if len(secret) > MaxMaskBytes {
			return &MaskTooLargeError{} // before its forms are made, each as long at least
		}
		size += len(secret)
	}
	size = min(size, MaxMaskBytes+1-len(m.nodes))
	if m.nodes == nil {
		m.nodes, m.edges = make([]maskNode, 1, 1+size), make(map[uint32]int32, size)
	} else {
		m.nodes = slices.Grow(m.nodes, size)
	}
	for _, secret := range secrets {
		var added []string
		for _, form := range secretForms {
			// One form at a time, each checked against the bounds before the next is made:
			// an escaped form may be six times the secret.
			text := form(secret)
			if text == "" || slices.Contains(added, text) { // most forms of a plain secret are the same
				continue
			}
			added = append(added, text)
			if !m.insert(text) {
				return &MaskTooLargeError{}
			}
		}
	}
	return nil
}

// insert adds form to the trie, or tells that it would pass a bound.
func (m *Mask) insert(form string) bool {
	if m.read += len(form); m.read > maxMaskReadBytes {
		return false
	}
	node := int32(0)
	for i := range len(form) {
		key := uint32(node)<<8 | uint32(form[i])
		child, found := m.edges[key]
		if !found {
			if len(m.nodes) > MaxMaskBytes {
				return false
			}
			child = int32(len(m.nodes))
			m.nodes = append(m.nodes, maskNode{depth: int32(i + 1), parent: node, label: form[i]})
			m.edges[key] = child
			m.linked = false
		}
		node = child
	}
	if m.nodes[node].longest != int32(len(form)) {
		m.nodes[node].longest, m.linked = int32(len(form)), false
	}
	return true
}

// link sets every node's fail link and longest suffix form, shortest nodes first: a node's
// links come from its parent's, and from nodes shorter than it.
func (m *Mask) link() {
	if m.linked {
		return
	}
	byDepth := make([]int32, len(m.nodes)) // counting sort: nodes were made in any order
	starts := make([]int, len(m.nodes)+1)
	for _, node := range m.nodes {
		starts[node.depth+1]++
	}
	for depth := 1; depth < len(starts); depth++ {
		starts[depth] += starts[depth-1]
	}
	for i, node := range m.nodes {
		byDepth[starts[node.depth]] = int32(i)
		starts[node.depth]++
	}
	for _, i := range byDepth[1:] { // the root first, and it has no link
		node := &m.nodes[i]
		node.fail = 0
		if parent := node.parent; parent != 0 {
			node.fail = m.next(m.nodes[parent].fail, node.label)
		}
		// A longest suffix found before is still a form: forms are only added.
		node.longest = max(node.longest, m.nodes[node.fail].longest)
	}
	m.linked = true
}

// next is the node after node reading b: its child, or the child of its longest suffix that
// has one, or the root.
func (m *Mask) next(node int32, b byte) int32 {
	for {
		if child, found := m.edges[uint32(node)<<8|uint32(b)]; found {
			return child
		}
		if node == 0 {
			return 0
		}
		node = m.nodes[node].fail
	}
}

// Apply returns text with every form of m's secrets masked (see Mask), in one pass.
func (m *Mask) Apply(text string) string {
	if m == nil || len(m.nodes) <= 1 {
		return text
	}
	m.link()
	body, ellipsis := strings.CutSuffix(text, "…")
	var spans [][2]int // masked, in order, apart from each other
	cover := func(start, end int) {
		for len(spans) > 0 && start <= spans[len(spans)-1][1] {
			start = min(start, spans[len(spans)-1][0])
			spans = spans[:len(spans)-1]
		}
		spans = append(spans, [2]int{start, end})
	}
	node := int32(0)
	for i := range len(body) {
		node = m.next(node, body[i])
		if n := int(m.nodes[node].longest); n > 0 {
			cover(i+1-n, i+1)
		}
	}
	if n := int(m.nodes[node].depth); n >= minCutPrefix {
		cover(len(body)-n, len(body)) // the end of body starts a form
	}
	if spans == nil {
		return text
	}
	var masked strings.Builder
	last := 0
	for _, span := range spans {
		masked.WriteString(body[last:span[0]])
		masked.WriteString(SecretMask)
		last = span[1]
	}
	masked.WriteString(body[last:])
	if ellipsis {
		masked.WriteString("…")
	}
	return masked.String()
}

// secretForms are the ways a message may quote a secret (see Mask).
var secretForms = []func(string) string{
	func(secret string) string { return secret },
	printable.String,
	func(secret string) string { return unquoted(strconv.Quote(secret)) },
	func(secret string) string { return unquoted(strconv.QuoteToASCII(secret)) },
	func(secret string) string { return unquoted(pyjson.Quote(secret)) },
	func(secret string) string { return unquoted(pyjson.Repr(secret)) },
	func(secret string) string { return strings.ReplaceAll(secret, "'", "''") }, // YAML's single quotes
	func(secret string) string {
		encoded, _ := json.Marshal(secret) // a string always encodes
		return unquoted(string(encoded))
	},
}

// unquoted is quoted without its first and last bytes, its quotes.
func unquoted(quoted string) string { return quoted[1 : len(quoted)-1] }

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
