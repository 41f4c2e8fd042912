package osm

import (
	"context"
	"maps"
	"net/url"
	"regexp"
	"strings"
)

// The operator reads only the records it works on (its own NS instances, their VNF records, its
// own operations), not whole collections: an OSM serves many OsmDeployments, and reading every
// tenant's records in every reconcile makes the traffic grow as the square of the fleet. The
// NBI has no "in" parameter, but OSM's common database layer reads an operator from the last
// element of a filter key: `?name.cont=a,b` keeps the records whose name is a or b, and
// `?name.eq=a` the records whose name is a. A plain `?_id=a` would not do: the NBI binds a query
// `_id` to the item id of the URL, answers that one record (an object, not a list) and drops
// every other filter.
//
// The NBI's query parser changes some values before they reach the filter (a value with a comma
// becomes a list, digits become a number, and YAML words such as "true" may become booleans),
// and URLs have a practical length limit. Values that could be changed, or too many of them, are
// not put in a filter: the whole collection is listed instead. Either way the answer is narrowed
// here to the wanted values, so callers get exactly the records they asked for.

// maxFilterLength bounds the query of a member filter, far below the 8 KiB request line that
// common proxies accept.
const maxFilterLength = 4000

// filterSafe matches the values the NBI's query parser leaves as they are: names that start
// with a letter, and OSM's own ids (UUIDs).
var filterSafe = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9 ._-]*[A-Za-z0-9._-])?$|^[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}$`)

// yamlWords are the words YAML 1.1 reads as booleans or null.
var yamlWords = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true}

// memberFilter returns the query that asks for the records whose field has one of values, and
// whether the NBI can be asked that exactly in one query.
func memberFilter(field string, values []string) (url.Values, bool) {
	length := 0
	for _, v := range values {
		if !filterSafe.MatchString(v) || yamlWords[strings.ToLower(v)] {
			return nil, false
		}
		length += len(url.QueryEscape(v)) + 1
	}
	if length > maxFilterLength {
		return nil, false
	}
	if len(values) == 1 {
		return url.Values{field + ".eq": values}, true
	}
	return url.Values{field + ".cont": {strings.Join(values, ",")}}, true
}

// listMembers sends the list request req, filtered to the records whose key is one of values
// when that can be asked of the NBI, and keeps those records, and those that lack the key: a
// malformed answer must reach the caller's checks, not look like a missing record. The others
// are dropped as the answer is read, so that what a call holds is what it asked for. No values
// lists every record.
func listMembers[T any](ctx context.Context, c *Client, req request, field string, values []string, key func(*T) string) ([]T, error) {
	if len(values) == 0 {
		return list[T](ctx, c, req, nil)
	}
	if query, exact := memberFilter(field, values); exact {
		merged := url.Values{}
		maps.Copy(merged, req.query)
		maps.Copy(merged, query)
		req.query = merged
	}
	wanted := make(map[string]bool, len(values))
	for _, v := range values {
		wanted[v] = true
	}
	return list(ctx, c, req, func(item *T) bool {
		k := key(item)
		return k == "" || wanted[k]
	})
}
