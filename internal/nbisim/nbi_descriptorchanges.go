package nbisim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/osmops/osmops/internal/nbisim/python"
	"github.com/osmops/osmops/internal/osmpkg"
)

// A full update of a package whose descriptor is in use (a VNF record has
// the VNFD's _id as vnfd-id, an NS record the NSD's as nsd-id) may change
// only what the NBI deems modifiable: DescriptorTopic.upload_content calls
// _validate_descriptor_changes (descriptor_topics.py) before it validates
// the new descriptor, and that compares the descriptor files as
// yaml.safe_load reads them, without the modifiable items, with DeepDiff.
// A VNFD whose software-version changes is not checked.

// checkInUseChanges is VnfdTopic._validate_descriptor_changes or
// NsdTopic._validate_descriptor_changes for an update of p with the
// checked package tarball.
func (s *Server) checkInUseChanges(p *packageRecord, tarball []byte, contents *osmpkg.Contents) *nbiError {
	if p.users == 0 { // base_topic.detect_descriptor_usage
		return nil
	}
	// The NBI opens the new package's descriptor path in the stored package.
	name := contents.Name + "/" + contents.DescriptorPath
	newContent, err := tarballFile(tarball, name)
	if err != nil {
		return nil // osmpkg.Inspect has read it
	}
	oldContent, err := tarballFile(p.tarball, name)
	if err != nil {
		// osm_common's FsLocal.file_open of "<_id>/<descriptor path>".
		return errorf(http.StatusNotFound, "storage exception File %s/%s does not exist", p.id, name)
	}
	return descriptorChanges(p.kind.kind, oldContent, newContent)
}

// pyException is a Python exception the NBI's code meets.
type pyException struct {
	kind, message string
}

func attributeError(v any, attribute string) *pyException {
	return &pyException{"AttributeError", fmt.Sprintf("'%s' object has no attribute '%s'", python.TypeName(v), attribute)}
}

// descriptorChanges compares an in-use descriptor file with its update and
// returns the NBI's refusal, nil when the update may go on.
func descriptorChanges(kind osmpkg.Kind, oldContent, newContent []byte) *nbiError {
	old, errOld := python.SafeLoad(oldContent)
	updated, errNew := python.SafeLoad(newContent)
	if errOld != nil || errNew != nil || !python.Truthy(old) || !python.Truthy(updated) {
		// The NBI refuses a file PyYAML cannot read before it compares;
		// the simulator's reading of the package let it through.
		return nil
	}
	vnf := kind == osmpkg.KindVNF
	refusal := func(e *pyException) *nbiError {
		// _validate_descriptor_changes re-raises these exception types with
		// a message of its own; nbi.py answers any exception that is not
		// one of the NBI's own with a 400 and str(e).
		switch e.kind {
		case "AttributeError", "IndexError", "ValueError":
			name := "NS"
			if vnf {
				name = "VNF"
			}
			return errorf(http.StatusBadRequest, "%s Descriptor could not be processed with error: %s.", name, e.message)
		}
		return errorf(http.StatusBadRequest, "%s", e.message)
	}
	var before, after any
	if vnf {
		oldVersion, e := findSoftwareVersion(old)
		if e != nil {
			return refusal(e)
		}
		newVersion, e := findSoftwareVersion(updated)
		if e != nil {
			return refusal(e)
		}
		if !python.Equal(oldVersion, newVersion) {
			return nil
		}
		if before, e = removeModifiableVNFDItems(old); e != nil {
			return refusal(e)
		}
		if after, e = removeModifiableVNFDItems(updated); e != nil {
			return refusal(e)
		}
	} else {
		var e *pyException
		if before, e = removeModifiableNSDItems(old); e != nil {
			return refusal(e)
		}
		if after, e = removeModifiableNSDItems(updated); e != nil {
			return refusal(e)
		}
	}
	changed, paths := python.DeepDiff(before, after)
	if !changed {
		return nil
	}
	if len(paths) == 0 {
		// DeepDiff found items added or removed, or types changed, but no
		// values_changed: disallowed_change.Get("values_changed").Keys().
		return refusal(attributeError(nil, "keys"))
	}
	nodes := make([]string, len(paths))
	for i, p := range paths {
		nodes[i] = strings.TrimLeft(p, "rot") // node.lstrip("root")
	}
	if vnf {
		return errorf(http.StatusUnprocessableEntity, "Error in validating new descriptor: %s cannot be modified, "+
			"there are disallowed changes in the vnf descriptor.", strings.Join(nodes, " , "))
	}
	return errorf(http.StatusUnprocessableEntity, "Error in validating new descriptor: %s cannot be modified, "+
		"there are disallowed changes in the ns descriptor. ", strings.Join(nodes, ", "))
}

// pyGet is v.Get(key, fallback).
func pyGet(v any, key string, fallback any) (any, *pyException) {
	d, isDict := v.(*python.Dict)
	if !isDict {
		return nil, attributeError(v, "get")
	}
	if value, found := d.Get(key); found {
		return value, nil
	}
	return fallback, nil
}

// pyPop is v.pop(key, None).
func pyPop(v any, key string) *pyException {
	switch d := v.(type) {
	case *python.Dict:
		d.Del(key)
		return nil
	case []any:
		return &pyException{"TypeError", "pop expected at most 1 argument, got 2"}
	}
	return attributeError(v, "pop")
}

// pyIterate is what a for loop over v walks.
func pyIterate(v any) ([]any, *pyException) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case *python.Dict:
		keys := make([]any, len(x.Members))
		for i, m := range x.Members {
			keys[i] = m.Key
		}
		return keys, nil
	case string:
		var chars []any
		for _, r := range x {
			chars = append(chars, string(r))
		}
		return chars, nil
	}
	return nil, &pyException{"TypeError", fmt.Sprintf("'%s' object is not iterable", python.TypeName(v))}
}

// findSoftwareVersion is VnfdTopic.find_software_version: the vnfd's
// software-version, "1.0" when it has none.
func findSoftwareVersion(vnfd any) (any, *pyException) {
	inner, e := pyGet(vnfd, "vnfd", nil)
	if e != nil {
		return nil, e
	}
	if python.Truthy(inner) {
		vnfd = inner
	}
	version, e := pyGet(vnfd, "software-version", nil)
	if e != nil {
		return nil, e
	}
	if python.Truthy(version) {
		return version, nil
	}
	return "1.0", nil
}

// removeModifiableVNFDItems is VnfdTopic.remove_modifiable_items: the vnfd
// without _admin, the day-1/2 primitives and the scaling, healing and
// alarm policies.
func removeModifiableVNFDItems(vnfd any) (any, *pyException) {
	inner, e := pyGet(vnfd, "vnfd", nil)
	if e != nil {
		return nil, e
	}
	if python.Truthy(inner) {
		vnfd = inner
	}
	if e := pyPop(vnfd, "_admin"); e != nil {
		return nil, e
	}
	// extract_day12_primitives
	dfs, e := pyGet(vnfd, "df", &python.Dict{})
	if e != nil {
		return nil, e
	}
	items, e := pyIterate(dfs)
	if e != nil {
		return nil, e
	}
	for _, df := range items {
		configuration, e := pyGet(df, "lcm-operations-configuration", &python.Dict{})
		if e != nil {
			return nil, e
		}
		operate, e := pyGet(configuration, "operate-vnf-op-config", &python.Dict{})
		if e != nil {
			return nil, e
		}
		day12, e := pyGet(operate, "day1-2", nil)
		if e != nil {
			return nil, e
		}
		if !python.Truthy(day12) {
			continue
		}
		configs, e := pyIterate(day12)
		if e != nil {
			return nil, e
		}
		for _, config := range configs {
			for _, key := range []string{"initial-config-primitive", "config-primitive", "terminate-config-primitive"} {
				if e := pyPop(config, key); e != nil {
					return nil, e
				}
			}
		}
	}
	// extract_policies
	for _, group := range []struct {
		field    string
		policies []string
	}{
		{"df", []string{"scaling-aspect", "healing-aspect"}},
		{"vdu", []string{"alarm", "monitoring-parameter"}},
	} {
		list, e := pyGet(vnfd, group.field, &python.Dict{})
		if e != nil {
			return nil, e
		}
		items, e := pyIterate(list)
		if e != nil {
			return nil, e
		}
		for _, item := range items {
			for _, policy := range group.policies {
				value, e := pyGet(item, policy, &python.Dict{})
				if e != nil {
					return nil, e
				}
				if python.Truthy(value) {
					item.(*python.Dict).Del(policy)
				}
			}
		}
	}
	return vnfd, nil
}

// removeModifiableNSDItems is NsdTopic.remove_modifiable_items: the nsd,
// out of its nsd envelopes, without _admin and the ns-configuration
// primitives.
func removeModifiableNSDItems(nsd any) (any, *pyException) {
	for {
		d, isDict := nsd.(*python.Dict)
		if !isDict {
			break
		}
		inner, _ := d.Get("nsd")
		if !python.Truthy(inner) {
			break
		}
		nsd = inner
	}
	if list, isList := nsd.([]any); isList {
		if len(list) == 0 {
			return nil, &pyException{"IndexError", "list index out of range"}
		}
		nsd = list[0]
	}
	if e := pyPop(nsd, "_admin"); e != nil {
		return nil, e
	}
	configuration, e := pyGet(nsd, "ns-configuration", nil)
	if e != nil {
		return nil, e
	}
	if python.Truthy(configuration) {
		for _, key := range []string{"config-primitive", "initial-config-primitive", "terminate-config-primitive"} {
			if e := pyPop(configuration, key); e != nil {
				return nil, e
			}
		}
	}
	return nsd, nil
}
