// Package python emulates the parts of CPython, PyYAML and DeepDiff whose behaviour shows in
// OSM's answers, so that the simulator (package nbisim) answers byte for byte as the NBI does.
// The NBI is Python: its dicts keep insertion order, it stores a KDU's params as the string
// json.dumps makes and nested values as "!!yaml " + yaml.safe_dump(v), its messages quote
// values with repr(), its list filters compare with Python's == and <, and it compares an
// in-use descriptor with its update as DeepDiff of the values yaml.safe_load reads (YAML 1.1:
// yes is a bool, 0777 an int).
//
// Dict is the one model of a Python dict and Equal the one ==, for values read from JSON (a
// request, a record) and by SafeLoad (a descriptor) alike; values.go lists the Go type of each
// Python type. The YAML 1.1 resolver and scalar constructors come from internal/pyyaml, which
// the operator's client shares; this package is the simulator's only.
package python
