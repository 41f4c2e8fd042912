package osm

import (
	"strings"
	"testing"
)

func TestMemberFilter(t *testing.T) {
	long := strings.Repeat("n", 200)
	for _, test := range []struct {
		name   string
		values []string
		want   string
		exact  bool
	}{
		{"one name is an equality", []string{"ldap one"}, "name.eq=ldap+one", true},
		{"several names use osm_common's cont operator", []string{"ldap", "ldap-2.b_c"}, "name.cont=ldap%2Cldap-2.b_c", true},
		{"OSM ids", []string{"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "ldap"}, "name.cont=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0%2Cldap", true},
		{"a comma would split the value", []string{"a,b"}, "", false},
		{"digits would become a number", []string{"ldap", "42"}, "", false},
		{"a leading digit could be read as a number", []string{"1e5"}, "", false},
		{"YAML words could become booleans", []string{"Yes"}, "", false},
		{"a trailing space would be trimmed", []string{"ldap "}, "", false},
		{"a colon could make a map", []string{"a: b"}, "", false},
		{"the empty name", []string{""}, "", false},
		{"too long a query", []string{long, long + "x", long + "y", long + "z", long + "w", long + "v", long + "u", long + "t",
			long + "s", long + "r", long + "q", long + "p", long + "o", long + "m", long + "l", long + "k", long + "j", long + "i",
			long + "h", long + "g"}, "", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			query, exact := memberFilter("name", test.values)
			if exact != test.exact || (exact && query.Encode() != test.want) {
				t.Errorf("memberFilter(%q) = %q, %v; want %q, %v", test.values, query.Encode(), exact, test.want, test.exact)
			}
		})
	}
}
