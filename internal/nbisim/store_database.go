package nbisim

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// database is the NBI's state: the collections of its MongoDB, with the
// indexes the simulator needs to stay fast with many NS instances.
type database struct {
	vims         *table[*vimRecord]
	vimsByName   map[string]*vimRecord
	clusters     *table[*clusterRecord]
	vnfPackages  *packageStore
	nsPackages   *packageStore
	nsInstances  *table[*nsRecord]
	nsByName     map[string][]*nsRecord
	vnfInstances *table[*vnfRecord]
	operations   *table[*operationRecord]
	// users are the users made through the API; the configured one is Server.account.
	users       *table[*userRecord]
	usersByName map[string]*userRecord
}

func newDatabase() *database {
	return &database{
		vims:         newTable[*vimRecord](),
		vimsByName:   map[string]*vimRecord{},
		clusters:     newTable[*clusterRecord](),
		vnfPackages:  newPackageStore(),
		nsPackages:   newPackageStore(),
		nsInstances:  newTable[*nsRecord](),
		nsByName:     map[string][]*nsRecord{},
		vnfInstances: newTable[*vnfRecord](),
		operations:   newTable[*operationRecord](),
		users:        newTable[*userRecord](),
		usersByName:  map[string]*userRecord{},
	}
}

// adminDoc is the _admin member every record has.
type adminDoc struct {
	Created       epochTime `json:"created"`
	Modified      epochTime `json:"modified"`
	ProjectsRead  []string  `json:"projects_read"`
	ProjectsWrite []string  `json:"projects_write"`
}

func (s *Server) newAdmin(now time.Time) adminDoc {
	return adminDoc{Created: epoch(now), Modified: epoch(now), ProjectsRead: []string{s.projectID}, ProjectsWrite: []string{s.projectID}}
}

// notFound words the NBI's answer for an unknown _id: osm_common's
// DbException on get_one (the filter shown is reduced to the _id and the
// project, in Python's rendering).
func (s *Server) notFound(id string) *nbiError {
	return errorf(http.StatusNotFound, "%s", s.notFoundText(id))
}

func (s *Server) notFoundText(id string) string {
	filter := python.NewDict("_id", id, "_admin.projects_read.cont", []any{s.projectID, "ANY"})
	return fmt.Sprintf("database exception Not found entry with filter='%s'", python.Repr(filter))
}

// listFilter is the filters of a list request (?name=X&...): each query
// key with its value as the NBI's _format_in leaves it, without the NBI's
// administrative query words and without _id, which CherryPy binds to the
// handler's argument (see routeOf).
type listFilter map[string]any

var administrativeQueryWords = []string{"FORCE", "ADMIN", "PUBLIC", "SET_PROJECT", "METHOD"}

func filterOf(query url.Values) listFilter {
	filter := listFilter{}
	for key, values := range query {
		if len(values) == 0 || isAdministrativeWord(key) || key == "_id" {
			continue
		}
		filter[key] = queryValue(key, values)
	}
	return filter
}

func isAdministrativeWord(key string) bool {
	return slices.Contains(administrativeQueryWords, key)
}

// queryValue is nbi.py's _format_in for one query parameter: a repeated
// parameter is a list (CherryPy's), an empty value None; a value of a .gt,
// .gte, .lt or .lte key an int, else a float, if it reads as one; another
// value with a comma after its first character a list of its
// comma-separated parts ("a,b" but not ",a").
func queryValue(key string, values []string) any {
	if len(values) > 1 {
		list := make([]any, len(values))
		for i, v := range values {
			list[i] = nullIfEmpty(v)
		}
		return list
	}
	v := values[0]
	switch {
	case v == "":
		return nil
	case strings.HasSuffix(key, ".gt") || strings.HasSuffix(key, ".lt") || strings.HasSuffix(key, ".gte") || strings.HasSuffix(key, ".lte"):
		if n, ok := pythonIntOf(v); ok {
			return n
		}
		if f, ok := pythonFloatOf(v); ok {
			return f
		}
	case strings.Index(v, ",") > 0:
		parts := strings.Split(v, ",")
		list := make([]any, len(parts))
		for i, part := range parts {
			list[i] = part
		}
		return list
	}
	return v
}

func nullIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

var (
	pythonIntText   = regexp.MustCompile(`^[+-]?[0-9]+(_[0-9]+)*$`)
	pythonFloatText = regexp.MustCompile(`^[+-]?(([0-9]+(_[0-9]+)*)?\.?[0-9]+(_[0-9]+)*|[0-9]+(_[0-9]+)*\.)([eE][+-]?[0-9]+(_[0-9]+)*)?$`)
	pythonFloatWord = regexp.MustCompile(`(?i)^[+-]?(inf|infinity|nan)$`)
)

// pythonIntOf is Python's int(text), for decimal integers that fit 64 bits.
func pythonIntOf(text string) (int64, bool) {
	text = strings.TrimSpace(text)
	if !pythonIntText.MatchString(text) {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(text, "_", ""), 10, 64)
	return n, err == nil
}

// pythonFloatOf is Python's float(text).
func pythonFloatOf(text string) (float64, bool) {
	text = strings.TrimSpace(text)
	if !pythonFloatText.MatchString(text) && !pythonFloatWord.MatchString(text) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// matches tells whether a record passes the filter, as osm_common's
// dbmemory matches a row: dots in a key reach nested fields, an array
// matches when one of its elements does, a key ending in an operator (eq,
// neq, ne, gt, gte, lt, lte, cont, ncont) compares with it. The simulator
// reads the fields from the record's rendered JSON, which is slow but only
// for filters without an index.
func (f listFilter) matches(d doc) bool {
	if len(f) == 0 {
		return true
	}
	parsed, err := python.ParseJSON(d)
	if err != nil {
		return false
	}
	for key, target := range f {
		path, operator := splitOperator(key)
		if !recursiveFind(path, 0, parsed, operator, target) {
			return false
		}
	}
	return true
}

// filterOperators are the operators dbmemory reads from the last element of a key.
var filterOperators = []string{"eq", "ne", "gt", "gte", "lt", "lte", "cont", "ncont", "neq"}

// splitOperator splits "a.b.gte" into the field path [a b] and its operator.
func splitOperator(key string) ([]string, string) {
	path := strings.Split(key, ".")
	if last := path[len(path)-1]; slices.Contains(filterOperators, last) {
		return path[:len(path)-1], last
	}
	return path, "eq"
}

func negatedOperator(operator string) bool {
	return operator == "neq" || operator == "ne" || operator == "ncont"
}

// recursiveFind is dbmemory's _find.recursive_find: whether content, from
// the field path[next] on, matches the target with the operator.
func recursiveFind(path []string, next int, content any, operator string, target any) bool {
	if next == len(path) || content == nil {
		return compareField(content, operator, target)
	}
	switch c := content.(type) {
	case *python.Dict:
		child, _ := c.Get(path[next])
		return recursiveFind(path, next+1, child, operator, target)
	case []any:
		// Stop at the first element that matches, or, for a negated
		// operator or a None target (not both), at the first that does not.
		lookForMatch := (target == nil) == negatedOperator(operator)
		for _, item := range c {
			if recursiveFind(path, next, item, operator, target) == lookForMatch {
				return lookForMatch
			}
		}
		if isDecimal(path[next]) {
			if i, err := strconv.Atoi(path[next]); err == nil && i < len(c) {
				if recursiveFind(path, next+1, c[i], operator, target) == lookForMatch {
					return lookForMatch
				}
			}
		}
		return !lookForMatch
	}
	// A scalar where the path goes on: the field is not there.
	if negatedOperator(operator) {
		return target != nil
	}
	return target == nil
}

func isDecimal(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// compareField compares a field's value with the target as dbmemory does,
// with Python's comparisons: a comparison Python refuses (a string with a
// number) does not match.
func compareField(content any, operator string, target any) bool {
	targets, targetIsList := target.([]any)
	items, contentIsList := content.([]any)
	switch operator {
	case "eq", "cont":
		switch {
		case targetIsList && contentIsList:
			return slices.ContainsFunc(items, func(item any) bool { return pythonIn(item, targets) })
		case targetIsList:
			return pythonIn(content, targets)
		case contentIsList:
			return pythonIn(target, items)
		}
		return python.Equal(content, target)
	case "neq", "ne", "ncont":
		switch {
		case targetIsList && contentIsList:
			return !slices.ContainsFunc(items, func(item any) bool { return pythonIn(item, targets) })
		case targetIsList:
			return !pythonIn(content, targets)
		case contentIsList:
			return !pythonIn(target, items)
		}
		return !python.Equal(content, target)
	}
	comparison, ok := python.Compare(content, target)
	if !ok {
		return false
	}
	switch operator {
	case "gt":
		return comparison > 0
	case "gte":
		return comparison >= 0
	case "lt":
		return comparison < 0
	}
	return comparison <= 0 // lte
}

func pythonIn(value any, list []any) bool {
	return slices.ContainsFunc(list, func(item any) bool { return python.Equal(value, item) })
}

// filterDocs keeps the docs that pass the filter.
func filterDocs(docs []doc, filter listFilter) []doc {
	if len(filter) == 0 {
		return docs
	}
	kept := docs[:0]
	for _, d := range docs {
		if filter.matches(d) {
			kept = append(kept, d)
		}
	}
	return kept
}

// record is a listed record: it has a rendered doc.
type record interface{ document() doc }

func (p *packageRecord) document() doc    { return p.doc }
func (ns *nsRecord) document() doc        { return ns.doc }
func (v *vnfRecord) document() doc        { return v.doc }
func (op *operationRecord) document() doc { return op.doc }
func (v *vimRecord) document() doc        { return v.doc }
func (k *clusterRecord) document() doc    { return k.doc }

// index finds the records whose field has a value, without reading them all.
type index[R record] struct {
	field  string
	lookup func(value string) []R
}

// listRecords answers a list request: the records an index gives when the query filters on an
// indexed field (?field=X, ?field.eq=X or ?field.cont=X, or a list of values, X,Y), else all
// records, then the other filters.
func listRecords[R record](c *call, all func() []R, indexes ...index[R]) response {
	filter := filterOf(c.request.URL.Query())
	candidates, indexed := indexedCandidates(filter, indexes, all)
	if !indexed {
		candidates = all()
	}
	docs := make([]doc, len(candidates))
	for i, r := range candidates {
		docs[i] = r.document()
	}
	return listResponse(filterDocs(docs, filter))
}

// indexedCandidates looks up the first indexed filter of the query and removes it from filter.
// An index serves equality with strings only: other values keep the filter on the records.
func indexedCandidates[R record](filter listFilter, indexes []index[R], all func() []R) ([]R, bool) {
	for _, ix := range indexes {
		for _, key := range []string{ix.field, ix.field + ".eq", ix.field + ".cont"} {
			var values []string
			switch target := filter[key].(type) {
			case string:
				values = []string{target}
			case []any:
				for _, item := range target {
					value, isString := item.(string)
					if !isString {
						values = nil
						break
					}
					values = append(values, value)
				}
			}
			if len(values) == 0 {
				continue
			}
			delete(filter, key)
			if len(values) == 1 {
				return ix.lookup(values[0]), true
			}
			// Several values: the records in the database's order.
			found := map[any]bool{}
			for _, value := range values {
				for _, r := range ix.lookup(value) {
					found[r] = true
				}
			}
			var union []R
			for _, r := range all() {
				if found[r] {
					union = append(union, r)
				}
			}
			return union, true
		}
	}
	return nil, false
}
