package nbisim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// nsRecord is an NS instance with its VNF records and operations.
type nsRecord struct {
	id  string
	nsd *packageRecord
	// nsdDoc is the NSD as it was when the NS was created, which the record shows.
	nsdDoc []byte
	fields nsrDoc
	vnfs   []*vnfRecord
	// operations in creation order; current is the one PROCESSING, if any.
	operations []*operationRecord
	current    *operationRecord
	doc        doc
}

// instantiated is the NBI's _admin.nsState check.
func (ns *nsRecord) instantiated() bool { return ns.fields.Admin.NsState == "INSTANTIATED" }

type vnfRecord struct {
	id     string
	ns     *nsRecord
	vnfd   *packageRecord
	fields vnfrDoc
	doc    doc
}

func (ns *nsRecord) render(now time.Time) {
	ns.fields.Admin.Modified = epoch(now)
	ns.doc = spliceNSD(renderDoc(&ns.fields), ns.nsdDoc)
}

func (v *vnfRecord) render(now time.Time) {
	v.fields.Admin.Modified = epoch(now)
	v.doc = renderDoc(&v.fields)
}

// nsCreation is a checked NS create request, ready to become records.
type nsCreation struct {
	input *python.Dict
	ns    *nsRecord
	// deferredFailure is why the instantiate will fail: the NBI accepts a
	// wrong member-vnf-index or kdu_name and LCM fails on it later.
	deferredFailure string
}

// buildNS checks an NS create body and builds the NS and VNF records the
// NBI's NsrTopic.new would store, without storing them yet.
func (s *Server) buildNS(input *python.Dict, now time.Time) (*nsCreation, *nbiError) {
	if problem := nsInstantiateSchema.validate(input); problem != nil {
		return nil, errorf(http.StatusUnprocessableEntity, "%s while 'validating input parameters'", problem.formatError())
	}
	nsdID := input.Str("nsdId")
	step := fmt.Sprintf("getting nsd id='%s' from database", nsdID)
	nsd, found := s.db.nsPackages.records.get(nsdID)
	if !found {
		return nil, errorf(http.StatusNotFound, "%s while '%s'", s.notFoundText(nsdID), step)
	}
	nsParams, err := formatParams(input.Obj("additionalParamsForNs"), "additionalParamsForNs", false)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "%v while '%s'", err, step)
	}
	namespace := s.projectID
	if ns := input.Str("k8s-namespace"); ns != "" {
		namespace = ns
	}
	if ns := nsParams.Str("k8s-namespace"); ns != "" {
		namespace = ns
	}

	id := uuid.NewString()
	instantiateParams := input.Clone()
	instantiateParams.Del("additionalParamsForNs")
	instantiateParams.Del("additionalParamsForVnf")
	var description any = ""
	if value, given := input.Get("nsDescription"); given {
		description = value
	}
	ns := &nsRecord{id: id, nsd: nsd, nsdDoc: nsd.nested}
	ns.fields = nsrDoc{
		Name: input.Str("nsName"), NameRef: input.Str("nsName"), ShortName: input.Str("nsName"),
		AdminStatus: "ENABLED", NsState: "NOT_INSTANTIATED", CurrentOperation: "IDLE",
		Datacenter: input.Str("vimAccountId"), ResourceOrchestrator: "osmopenmano",
		Description: description, ConstituentVnfrRef: []string{},
		OperationalStatus: "init", ConfigStatus: "init", DetailedStatus: "scheduled",
		CreateTime: epoch(now), NsdNameRef: nsd.descriptor.Str("name"), OperationalEvents: []any{},
		NsdRef: nsd.descriptorID, NsdID: nsd.id, VnfdID: []string{},
		InstantiateParams: instantiateParams, AdditionalParamsForNs: nsParams,
		NsInstanceConfigRef: id, ID: id, UID: id,
		Flavor: []any{}, Image: []any{}, AffinityGroups: []any{}, SharedVolumes: []any{}, Vnffgd: []any{},
		Revision: nsd.revision, Vld: nsVirtualLinks(nsd.descriptor),
		Admin: nsrAdminDoc{adminDoc: s.newAdmin(now), NsState: "NOT_INSTANTIATED"},
	}
	// The NBI adds nsr_id to the request, which the instantiate operation's
	// params then show.
	input.Set("nsr_id", id)

	creation := &nsCreation{input: input, ns: ns}
	profiles := vnfProfiles(nsd.descriptor)
	creation.deferredFailure = checkParamsTargets(input, profiles, s.db.vnfPackages)
	for _, profile := range profiles {
		vnfdID, index := profile.Str("vnfd-id"), profile.Str("id")
		vnfd := s.db.vnfPackages.byDescriptorID[vnfdID]
		if vnfd == nil {
			return nil, errorf(http.StatusNotFound, "%s while 'getting vnfd id='%s' constituent-vnfd='%s' from database'",
				s.notFoundText(vnfdID), vnfdID, index)
		}
		vnf, err := s.buildVNF(ns, vnfd, index, input, namespace, now)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "%v while 'filling vnfr  vnfd-id='%s' constituent-vnfd='%s''", err, vnfdID, index)
		}
		if !containsString(ns.fields.VnfdID, vnfd.id) {
			ns.fields.VnfdID = append(ns.fields.VnfdID, vnfd.id)
		}
		ns.fields.ConstituentVnfrRef = append(ns.fields.ConstituentVnfrRef, vnf.id)
		ns.vnfs = append(ns.vnfs, vnf)
	}
	return creation, nil
}

// vnfProfiles lists the vnf-profiles of the NSD's first deployment flavour,
// the only one the NBI instantiates.
func vnfProfiles(nsd *python.Dict) []*python.Dict {
	var profiles []*python.Dict
	if dfs := nsd.List("df"); len(dfs) > 0 {
		df, _ := dfs[0].(*python.Dict)
		for _, item := range df.List("vnf-profile") {
			if profile, ok := item.(*python.Dict); ok {
				profiles = append(profiles, profile)
			}
		}
	}
	return profiles
}

// nsVirtualLinks is the NS record's vld: the NSD's virtual-link-desc with
// the connection points the vnf-profiles attach to each.
func nsVirtualLinks(nsd *python.Dict) []any {
	descriptors := nsd.List("virtual-link-desc")
	if len(descriptors) == 0 {
		return nil
	}
	links := make([]any, 0, len(descriptors))
	for _, item := range descriptors {
		vld, ok := item.(*python.Dict)
		if !ok {
			continue
		}
		vld = vld.Clone()
		refs := []any{}
		for _, profile := range vnfProfiles(nsd) {
			for _, connectivityItem := range profile.List("virtual-link-connectivity") {
				connectivity, _ := connectivityItem.(*python.Dict)
				if connectivity.Str("virtual-link-profile-id") != vld.Str("id") {
					continue
				}
				for _, cpdItem := range connectivity.List("constituent-cpd-id") {
					cpd, _ := cpdItem.(*python.Dict)
					refs = append(refs, python.NewDict(
						"member-vnf-index-ref", cpd.Str("constituent-base-element-id"),
						"vnfd-connection-point-ref", cpd.Str("constituent-cpd-id"),
						"vnfd-id-ref", profile.Str("vnfd-id")))
				}
			}
		}
		vld.Set("vnfd-connection-point-ref", refs)
		vld.Set("name", vld.Str("id"))
		links = append(links, vld)
	}
	return links
}

// checkParamsTargets finds a member-vnf-index or kdu_name of
// additionalParamsForVnf that the NS does not have. The NBI accepts them;
// the instantiate operation then fails, and the message words the check
// with the NBI's own phrases for such mistakes.
func checkParamsTargets(input *python.Dict, profiles []*python.Dict, vnfds *packageStore) string {
	for _, item := range input.List("additionalParamsForVnf") {
		vnfParams, _ := item.(*python.Dict)
		index := vnfParams.Str("member-vnf-index")
		var profile *python.Dict
		for _, candidate := range profiles {
			if candidate.Str("id") == index {
				profile = candidate
			}
		}
		if profile == nil {
			return fmt.Sprintf("Invalid parameter additionalParamsForVnf: member-vnf-index='%s' is not one of the nsd:constituent-vnfd", index)
		}
		vnfd := vnfds.byDescriptorID[profile.Str("vnfd-id")]
		for _, kduItem := range vnfParams.List("additionalParamsForKdu") {
			kduParams, _ := kduItem.(*python.Dict)
			name := kduParams.Str("kdu_name")
			if vnfd != nil && findKDU(vnfd.descriptor, name) == nil {
				return fmt.Sprintf("Invalid parameter additionalParamsForVnf[member-vnf-index=%s]: kdu_name='%s' not present at vnfd:kdu:name", index, name)
			}
		}
	}
	return ""
}

func findKDU(vnfd *python.Dict, name string) *python.Dict {
	for _, item := range vnfd.List("kdu") {
		if kdu, ok := item.(*python.Dict); ok && kdu.Str("name") == name {
			return kdu
		}
	}
	return nil
}

func findByKey(items []any, key, value string) *python.Dict {
	for _, item := range items {
		if o, ok := item.(*python.Dict); ok && o.Str(key) == value {
			return o
		}
	}
	return nil
}

// buildVNF makes the VNF record of one vnf-profile, as the NBI's
// _create_vnfr_descriptor_from_vnfd does (VDUs are not simulated).
func (s *Server) buildVNF(ns *nsRecord, vnfd *packageRecord, index string, input *python.Dict, namespace string, now time.Time) (*vnfRecord, error) {
	vnfParamsItem := findByKey(input.List("additionalParamsForVnf"), "member-vnf-index", index)
	where := fmt.Sprintf("additionalParamsForVnf[member-vnf-index=%s]", index)
	vnfParams, err := formatParams(vnfParamsItem.Obj("additionalParams"), where, false)
	if err != nil {
		return nil, err
	}
	if ns := vnfParamsItem.Str("k8s-namespace"); ns != "" {
		namespace = ns
	}
	id := uuid.NewString()
	vnf := &vnfRecord{id: id, ns: ns, vnfd: vnfd}
	vnf.fields = vnfrDoc{
		ID: id, UID: id, NsrIDRef: ns.id, MemberVnfIndexRef: index, AdditionalParamsForVnf: vnfParams,
		CreatedTime: epoch(now), VnfdRef: vnfd.descriptorID, VnfdID: vnfd.id,
		Vdur: []any{}, ConnectionPoint: connectionPoints(vnfd.descriptor), Revision: vnfd.revision,
		K8sCluster: k8sClusterRequirements(vnfd.descriptor),
		Admin:      nsrAdminDoc{adminDoc: s.newAdmin(now), NsState: "NOT_INSTANTIATED"},
	}
	for _, item := range vnfd.descriptor.List("kdu") {
		kdu, _ := item.(*python.Dict)
		kduItem := findByKey(vnfParamsItem.List("additionalParamsForKdu"), "kdu_name", kdu.Str("name"))
		kdur := &kdurDoc{
			K8sNamespace: namespace, KduDeploymentName: kduItem.Str("kdu-deployment-name"),
			KduName: kdu.Str("name"), HelmVersion: kdu.Str("helm-version"),
		}
		if ns := kduItem.Str("k8s-namespace"); ns != "" {
			kdur.K8sNamespace = ns
		}
		model := kduItem.Str("kdu_model")
		if chart := kdu.Str("helm-chart"); chart != "" {
			kdur.HelmChart = firstNonEmpty(model, chart)
		}
		if bundle := kdu.Str("juju-bundle"); bundle != "" {
			kdur.JujuBundle = firstNonEmpty(model, bundle)
		}
		kduWhere := where + fmt.Sprintf(".additionalParamsForKdu[kdu_name=%s]", kdur.KduName)
		if err := kdur.setParams(kduItem.Obj("additionalParams"), kduWhere); err != nil {
			return nil, err
		}
		vnf.fields.Kdur = append(vnf.fields.Kdur, kdur)
	}
	return vnf, nil
}

// setParams stores a KDU's params the NBI's way: a JSON string, or null
// when there are none.
func (k *kdurDoc) setParams(params *python.Dict, where string) error {
	formatted, err := formatParams(params, where, true)
	if err != nil {
		return err
	}
	k.params = params
	if formatted == nil {
		k.AdditionalParams = nil
		return nil
	}
	k.AdditionalParams = new(python.JSONDumps(formatted))
	return nil
}

func connectionPoints(vnfd *python.Dict) []any {
	points := []any{}
	for _, item := range vnfd.List("ext-cpd") {
		cpd, _ := item.(*python.Dict)
		internal := cpd.Obj("int-cpd")
		points = append(points, python.NewDict(
			"name", cpd.Str("id"),
			"connection-point-id", nullable(internal.Str("cpd")),
			"connection-point-vdu-id", nullable(internal.Str("vdu-id")),
			"id", cpd.Str("id")))
	}
	return points
}

// k8sClusterRequirements is the VNF record's k8s-cluster: the VNFD's, with
// each net's external connection point.
func k8sClusterRequirements(vnfd *python.Dict) *python.Dict {
	cluster := vnfd.Obj("k8s-cluster").Clone()
	if cluster == nil {
		return nil
	}
	for _, item := range cluster.List("nets") {
		net, _ := item.(*python.Dict)
		for _, cpdItem := range vnfd.List("ext-cpd") {
			cpd, _ := cpdItem.(*python.Dict)
			if cpd.Str("k8s-cluster-net") == net.Str("id") {
				net.Set("external-connection-point-ref", cpd.Str("id"))
			}
		}
	}
	return cluster
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func containsString(list []string, s string) bool {
	return slices.Contains(list, s)
}

var jinjaIdentifier = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// formatParams is the NBI's _format_additional_params for one set of
// params: it checks the keys and renders nested values as "!!yaml ...".
// It returns nil for no or empty params.
func formatParams(params *python.Dict, where string, forKDU bool) (*python.Dict, error) {
	if params == nil || len(params.Members) == 0 {
		return nil, nil
	}
	formatted := &python.Dict{}
	for _, m := range params.Members {
		key, _ := m.Key.(string) // params are JSON: their keys are strings
		if !forKDU && !jinjaIdentifier.MatchString(key) {
			return nil, fmt.Errorf("Invalid param name at %s:%s. Must contain only alphanumeric characters "+
				"and underscores, and cannot start with a digit", where, key)
		}
		if strings.Contains(key, "$") {
			return nil, fmt.Errorf("Invalid param at %s:%s. Keys must not contain $ symbol", where, key)
		}
		value := m.Value
		switch value.(type) {
		case *python.Dict, []any:
			value = "!!yaml " + python.SafeDump(value)
		}
		formatted.Set(m.Key, value)
	}
	return formatted, nil
}

// addNS stores the records of a checked creation.
func (s *Server) addNS(ns *nsRecord, now time.Time) {
	s.db.nsInstances.add(ns.id, ns)
	s.db.nsByName[ns.fields.Name] = append(s.db.nsByName[ns.fields.Name], ns)
	s.usePackage(ns.nsd, 1)
	for _, vnf := range ns.vnfs {
		s.db.vnfInstances.add(vnf.id, vnf)
		s.usePackage(vnf.vnfd, 1)
		vnf.render(now)
	}
	ns.render(now)
}

// removeNS deletes an NS instance with its VNF records and operations, as
// the NBI's delete_extra does, and frees its descriptors.
func (s *Server) removeNS(ns *nsRecord) {
	s.db.nsInstances.remove(ns.id)
	named := s.db.nsByName[ns.fields.Name]
	for i, candidate := range named {
		if candidate == ns {
			named = append(named[:i], named[i+1:]...)
			break
		}
	}
	if len(named) == 0 {
		delete(s.db.nsByName, ns.fields.Name)
	} else {
		s.db.nsByName[ns.fields.Name] = named
	}
	s.usePackage(ns.nsd, -1)
	for _, vnf := range ns.vnfs {
		s.db.vnfInstances.remove(vnf.id)
		s.usePackage(vnf.vnfd, -1)
	}
	for _, op := range ns.operations {
		op.removed = true
		s.db.operations.remove(op.id)
	}
}

// usePackage counts a user more or less of a descriptor and refreshes its
// usageState when it changes.
func (s *Server) usePackage(p *packageRecord, delta int) {
	before := p.usageState()
	p.users += delta
	if p.usageState() != before {
		if _, stored := p.kind.store(s.db).records.get(p.id); stored {
			s.renderPackage(p)
		}
	}
}

func (s *Server) findNS(id string) (*nsRecord, *nbiError) {
	ns, found := s.db.nsInstances.get(id)
	if !found {
		return nil, s.notFound(id)
	}
	return ns, nil
}

// listNSInstances serves GET .../ns_instances_content and .../ns_instances.
// ownerParam is the NS parameter osmops marks its NS instances with, and filters on in every
// reconcile: the filter is answered from the records' fields rather than their rendered JSON,
// as OSM's MongoDB answers it without decoding documents, so that large fleets stay fast here.
const ownerParam = "osmops_owner"

func (s *Server) listNSInstances(c *call) (response, *nbiError) {
	byName := func(name string) []*nsRecord { return s.db.nsByName[name] }
	byOwner := func(owner string) []*nsRecord {
		var found []*nsRecord
		for _, ns := range s.db.nsInstances.all() {
			if ns.fields.AdditionalParamsForNs.Str(ownerParam) == owner {
				found = append(found, ns)
			}
		}
		return found
	}
	return listRecords(c, s.db.nsInstances.all, index[*nsRecord]{"name", byName}, index[*nsRecord]{"additionalParamsForNs." + ownerParam, byOwner}), nil
}

func (s *Server) getNSInstance(c *call) (response, *nbiError) {
	ns, err := s.findNS(c.param(0))
	if err != nil {
		return response{}, err
	}
	return docResponse(ns.doc), nil
}

// buildNSOf is buildNS for the body of a request, after NsrTopic.new's first step, the
// project's quota of NS records, whose refusal names the step.
func (s *Server) buildNSOf(c *call) (*nsCreation, *nbiError) {
	if err := s.checkQuota(c, QuotaNSInstances, len(s.db.nsInstances.byID)); err != nil {
		err.detail += " while 'checking quotas'"
		return nil, err
	}
	input, err := c.jsonObject()
	if err != nil {
		return nil, err
	}
	return s.buildNS(input, c.now)
}

// createNS serves POST .../ns_instances: the record only, NOT_INSTANTIATED.
func (s *Server) createNS(c *call) (response, *nbiError) {
	creation, err := s.buildNSOf(c)
	if err != nil {
		return response{}, err
	}
	s.addNS(creation.ns, c.now)
	id := creation.ns.id
	answer := jsonResponse(http.StatusCreated, map[string]string{"_id": id, "id": id})
	return answer.withHeader("Location", "/osm/nslcm/v1/ns_instances/"+id), nil
}

// createAndInstantiateNS serves POST .../ns_instances_content: the record
// and its instantiate operation, as one request.
func (s *Server) createAndInstantiateNS(c *call) (response, *nbiError) {
	creation, err := s.buildNSOf(c)
	if err != nil {
		return response{}, err
	}
	ns, input := creation.ns, creation.input
	input.Set("lcmOperationType", opInstantiate)
	input.Set("nsInstanceId", ns.id)
	placement, err := s.placeVNFs(ns, input.Str("vimAccountId"))
	if err != nil {
		return response{}, err
	}
	s.addNS(ns, c.now)
	s.applyPlacement(placement, input.Str("vimAccountId"), c.now)
	serializeOperationParams(input)
	op := s.acceptOperation(ns, opInstantiate, input, nil, c.now)
	if creation.deferredFailure != "" {
		op.failure = &plannedFailure{state: stateFailed, message: creation.deferredFailure}
	}
	answer := jsonResponse(http.StatusCreated, python.NewDict("id", ns.id, "nslcmop_id", op.id, "nsName", ns.fields.Name))
	return answer.withHeader("Location", "/osm/nslcm/v1/ns_instances_content/"+ns.id), nil
}

// terminateAndDeleteNS serves DELETE .../ns_instances_content/{id}: a
// terminate operation that removes the record when it completes (202 with
// {"_id": <operation>, "nsName"}), or, with ?FORCE=True, removal at once
// (204). For an NS that is not instantiated, NsLcmOpTopic.new makes no
// operation, and nbi.py, whose "elif not op_id" deletion belongs to the same
// if/elif chain as the terminate, then answers 204 without deleting it:
// that takes DELETE .../ns_instances/{id} or ?FORCE=True.
func (s *Server) terminateAndDeleteNS(c *call) (response, *nbiError) {
	ns, err := s.findNS(c.param(0))
	if err != nil {
		return response{}, err
	}
	if forced(c.request) {
		s.removeNS(ns)
		return noContent(), nil
	}
	if !ns.instantiated() {
		return noContent(), nil
	}
	params := python.NewDict("lcmOperationType", opTerminate, "nsInstanceId", ns.id, "autoremove", true)
	op := s.acceptOperation(ns, opTerminate, params, nil, c.now)
	// nbi.py, the DELETE branch: outdata = {"_id": op_id, "nsName": nsName}.
	return jsonResponse(http.StatusAccepted, python.NewDict("_id", op.id, "nsName", ns.fields.Name)), nil
}

// deleteNS serves DELETE .../ns_instances/{id}: no terminate, so an
// instantiated NS is refused unless forced.
func (s *Server) deleteNS(c *call) (response, *nbiError) {
	ns, err := s.findNS(c.param(0))
	if err != nil {
		return response{}, err
	}
	if ns.instantiated() && !forced(c.request) {
		return response{}, errorf(http.StatusConflict, "nsr '%s' cannot be deleted because it is in 'INSTANTIATED' state. "+
			"Launch 'terminate' operation first; or force deletion", ns.id)
	}
	s.removeNS(ns)
	return noContent(), nil
}

// listVNFInstances serves GET .../vnf_instances, with ?nsr-id-ref= indexed.
func (s *Server) listVNFInstances(c *call) (response, *nbiError) {
	byNS := func(id string) []*vnfRecord {
		if ns, found := s.db.nsInstances.get(id); found {
			return ns.vnfs
		}
		return nil
	}
	return listRecords(c, s.db.vnfInstances.all, index[*vnfRecord]{"nsr-id-ref", byNS}), nil
}

func (s *Server) getVNFInstance(c *call) (response, *nbiError) {
	vnf, found := s.db.vnfInstances.get(c.param(0))
	if !found {
		return response{}, s.notFound(c.param(0))
	}
	return docResponse(vnf.doc), nil
}
