package nbisim

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
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
	filter := newObject("_id", id, "_admin.projects_read.cont", []any{s.projectID, "ANY"})
	return fmt.Sprintf("database exception Not found entry with filter='%s'", pythonRepr(filter))
}

// listFilter is the simple filters of a list request (?name=X&...), without
// the NBI's administrative query words.
type listFilter map[string]string

var administrativeQueryWords = []string{"FORCE", "ADMIN", "PUBLIC", "SET_PROJECT", "METHOD"}

func filterOf(query url.Values) listFilter {
	filter := listFilter{}
	for key, values := range query {
		if len(values) == 0 || isAdministrativeWord(key) {
			continue
		}
		filter[key] = values[len(values)-1]
	}
	return filter
}

func isAdministrativeWord(key string) bool {
	for _, word := range administrativeQueryWords {
		if key == word {
			return true
		}
	}
	return false
}

// matches tells whether a record passes the filter. The NBI filters on any
// field, with dots for nested ones and any element of an array matching;
// the simulator reads the fields from the record's rendered JSON, which is
// slow but only for filters without an index.
func (f listFilter) matches(d doc) bool {
	if len(f) == 0 {
		return true
	}
	parsed, err := parseJSON(d)
	if err != nil {
		return false
	}
	for key, want := range f {
		path, operator := splitOperator(key)
		switch operator {
		case "neq", "ne":
			if fieldMatches(parsed, path, want, equalTo) {
				return false
			}
		case "ncont":
			if fieldMatches(parsed, path, want, containedIn) {
				return false
			}
		default:
			if !fieldMatches(parsed, path, want, comparisons[operator]) {
				return false
			}
		}
	}
	return true
}

// comparisons are the operators osm_common's database layer reads from the
// last element of a filter key (?startTime.gte=..., ?name.cont=a,b); the
// negated ones (neq, ne, ncont) are handled by matches.
var comparisons = map[string]func(have any, want string) bool{
	"eq":   equalTo,
	"gt":   ordered(func(c int) bool { return c > 0 }),
	"gte":  ordered(func(c int) bool { return c >= 0 }),
	"lt":   ordered(func(c int) bool { return c < 0 }),
	"lte":  ordered(func(c int) bool { return c <= 0 }),
	"cont": containedIn,
}

// splitOperator splits "a.b.gte" into the field path [a b] and its operator.
func splitOperator(key string) ([]string, string) {
	path := strings.Split(key, ".")
	last := path[len(path)-1]
	if _, known := comparisons[last]; (known || last == "neq" || last == "ne" || last == "ncont") && len(path) > 1 {
		return path[:len(path)-1], last
	}
	return path, "eq"
}

func equalTo(have any, want string) bool { return scalarText(have) == want }

// containedIn matches a value equal to one of the comma-separated wanted ones.
func containedIn(have any, want string) bool {
	for _, w := range strings.Split(want, ",") {
		if scalarText(have) == w {
			return true
		}
	}
	return false
}

// ordered compares numbers as numbers and anything else as text.
func ordered(accept func(comparison int) bool) func(have any, want string) bool {
	return func(have any, want string) bool {
		if have == nil {
			return false
		}
		haveText := scalarText(have)
		h, errHave := strconv.ParseFloat(haveText, 64)
		w, errWant := strconv.ParseFloat(want, 64)
		if errHave == nil && errWant == nil {
			return accept(cmp.Compare(h, w))
		}
		return accept(strings.Compare(haveText, want))
	}
}

func fieldMatches(value any, path []string, want string, compare func(any, string) bool) bool {
	if items, isList := value.([]any); isList {
		for _, item := range items {
			if fieldMatches(item, path, want, compare) {
				return true
			}
		}
		return false
	}
	if len(path) == 0 {
		return compare(value, want)
	}
	o, isObject := value.(*object)
	if !isObject {
		return false
	}
	child, found := o.get(path[0])
	return found && fieldMatches(child, path[1:], want, compare)
}

// scalarText renders a scalar as it is written in a query string.
func scalarText(value any) string {
	switch v := value.(type) {
	case string:
		return v
	case nil:
		return "None"
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	return fmt.Sprint(value)
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
// indexed field (?field=X, or ?field.cont=X,Y for any of several values), else all records, then
// the other filters.
func listRecords[R record](c *call, all func() []R, indexes ...index[R]) response {
	filter := filterOf(c.request.URL.Query())
	candidates, indexed := indexedCandidates(filter, indexes)
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
func indexedCandidates[R record](filter listFilter, indexes []index[R]) ([]R, bool) {
	for _, ix := range indexes {
		if value, found := filter[ix.field]; found {
			delete(filter, ix.field)
			return ix.lookup(value), true
		}
		if values, found := filter[ix.field+".cont"]; found {
			delete(filter, ix.field+".cont")
			var union []R
			seen := map[string]bool{}
			for _, value := range strings.Split(values, ",") {
				if !seen[value] {
					seen[value] = true
					union = append(union, ix.lookup(value)...)
				}
			}
			return union, true
		}
	}
	return nil, false
}
