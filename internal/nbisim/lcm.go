package nbisim

import (
	"cmp"
	"container/heap"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// LCM operation types (lcmOperationType) the simulator runs.
const (
	opInstantiate = "instantiate"
	opTerminate   = "terminate"
	opAction      = "action"
	opScale       = "scale"
	opUpdate      = "update"
)

// Operation states.
const (
	stateProcessing = "PROCESSING"
	stateCompleted  = "COMPLETED"
	stateFailed     = "FAILED"
	stateFailedTemp = "FAILED_TEMP"
)

// lcmSteps words what LCM writes while an operation of each type runs: the
// NS record's currentOperation, the name of the operation in error
// descriptions, the stage, and what the operation says when it gives up
// waiting for the operations before it (queueFailure, with the timeout's
// text). Taken from LCM's ns.py where known, else approximated.
var lcmSteps = map[string]struct{ current, errorName, stage, queueFailure string }{
	opInstantiate: {"INSTANTIATING", "INSTANTIATING", "Stage 2/5: deployment of KDUs, VMs and execution environments.", "Stage 1/5: preparation of the environment. Detail: %s"},
	opTerminate:   {"TERMINATING", "TERMINATING", "Stage 2/3: deletion of KDUs, VMs and execution environments.", "Stage 1/3: Preparing task. Detail: %s"},
	opAction:      {"RUNNING ACTION", "ACTION", "Running the action.", waitingFailure},
	opScale:       {"SCALING", "SCALE", "Stage 2/3: scaling.", waitingFailure},
	opUpdate:      {"UPDATING", "UPDATE", "Stage 2/3: updating.", waitingFailure},
}

// waitingFailure is how action, scale and update report an exception raised
// in their first step ("FAILED {step}: {exc}").
const waitingFailure = "FAILED Waiting for previous operations to terminate: %s"

// Defaults of LCM's wait for related tasks (lcm_utils.py waitfor_related_HA).
const (
	DefaultQueuePollInterval = 10 * time.Second
	DefaultQueueTimeout      = 3600 * time.Second
)

// DefaultAutoremoveDelay is how long OSM 19 kept a terminated NS record before its autoremove,
// measured on its real NBI and LCM (the message bus's way back to the NBI).
const DefaultAutoremoveDelay = 2 * time.Second

// An operation's phase in LCM.
type lcmPhase int

const (
	// phaseAccepted: written by the NBI, not yet taken up by LCM.
	phaseAccepted lcmPhase = iota
	// phaseWaiting: LCM waits for the operations accepted before it on the
	// same NS to end (waitfor_related_HA).
	phaseWaiting
	// phaseRunning: LCM runs it; the NS record shows it.
	phaseRunning
	// phaseRemoving: a terminate with autoremove completed; the NBI removes the NS record
	// when LCM's "terminated" message reaches it.
	phaseRemoving
)

// operationSchemas validate an operation's body (validation.py).
var operationSchemas = map[string]*schema{
	opInstantiate: nsInstantiateSchema,
	opTerminate:   nsTerminateSchema,
	opAction:      nsActionSchema,
	opScale:       nsScaleSchema,
	opUpdate:      nsUpdateSchema,
}

// kduPrimitives are the KDU primitives the NBI lets through without a
// config-primitive in the descriptor.
var kduPrimitives = []string{"upgrade", "rollback", "status", "inspect", "readme"}

type operationRecord struct {
	id     string
	ns     *nsRecord
	kind   string // lcmOperationType
	fields operationDoc
	// action is the checked target of an action, nil for other types.
	action *actionTarget
	// failure, when set, is how the operation ends instead of COMPLETED.
	failure *plannedFailure
	phase   lcmPhase
	// due is when LCM next acts on the operation: takes it up, polls its
	// related tasks, or completes it.
	due time.Time
	seq uint64
	// waitLeft is what remains of LCM's time to wait for related tasks;
	// related is the number of them LCM last wrote.
	waitLeft time.Duration
	related  int
	// queueIndex is the operation's place in the pending queue, -1 when out.
	queueIndex int
	// removed is set when the NS was deleted under a pending operation.
	removed bool
	doc     doc
}

type actionTarget struct {
	primitive string
	vnf       *vnfRecord
	kdu       *kdurDoc
	params    *python.Dict
}

type plannedFailure struct {
	state, message string
	// errorMessage is the operation's errorMessage when it is not message.
	errorMessage string
}

// operationQueue is the pending operations ordered by due time, then by
// creation: a min-heap, so moving operations forward costs O(log n) each.
type operationQueue []*operationRecord

func (q operationQueue) Len() int { return len(q) }
func (q operationQueue) Less(i, j int) bool {
	if !q[i].due.Equal(q[j].due) {
		return q[i].due.Before(q[j].due)
	}
	return q[i].seq < q[j].seq
}
func (q operationQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].queueIndex, q[j].queueIndex = i, j
}
func (q *operationQueue) Push(x any) {
	op := x.(*operationRecord)
	op.queueIndex = len(*q)
	*q = append(*q, op)
}
func (q *operationQueue) Pop() any {
	old := *q
	op := old[len(old)-1]
	old[len(old)-1] = nil
	op.queueIndex = -1
	*q = old[:len(old)-1]
	return op
}

// advanceLocked plays LCM up to now: operations are taken up, wait for the
// ones before them, start and complete when their time has come; held
// operations do not complete.
func (s *Server) advanceLocked(now time.Time) {
	var held []*operationRecord
	for len(s.pending) > 0 && !s.pending[0].due.After(now) {
		op := heap.Pop(&s.pending).(*operationRecord)
		switch {
		case op.removed:
		case op.phase == phaseRunning && s.held:
			held = append(held, op)
		default:
			s.stepOperation(op, op.due)
		}
	}
	for _, op := range held {
		heap.Push(&s.pending, op)
	}
}

// stepOperation is LCM's next step on an operation at its due time.
func (s *Server) stepOperation(op *operationRecord, at time.Time) {
	switch op.phase {
	case phaseAccepted:
		op.phase, op.waitLeft = phaseWaiting, s.queueTimeout
		s.waitForRelated(op, at)
	case phaseWaiting:
		s.waitForRelated(op, at)
	case phaseRunning:
		s.completeOperation(op, at)
	case phaseRemoving:
		s.removeNS(op.ns)
	}
}

// acceptOperation records a new operation as the NBI's _create_nslcmop
// writes it (nulls where LCM writes later) and hands it to LCM, which takes
// it up after the pickup delay. The NS record does not change until LCM
// starts the operation.
func (s *Server) acceptOperation(ns *nsRecord, kind string, params *python.Dict, action *actionTarget, now time.Time) *operationRecord {
	s.operationSeq++
	id := uuid.NewString()
	op := &operationRecord{id: id, ns: ns, kind: kind, action: action, due: s.pickupTime(now), seq: s.operationSeq}
	op.fields = operationDoc{
		ID: id, UID: id, OperationState: stateProcessing,
		StatusEnteredTime: epoch(now), NsInstanceID: ns.id, LcmOperationType: kind, StartTime: epoch(now),
		OperationParams: params,
		Links:           opLinks{Self: "/osm/nslcm/v1/ns_lcm_op_occs/" + id, NsInstance: "/osm/nslcm/v1/ns_instances/" + ns.id},
		Admin:           s.newAdmin(now),
	}
	op.failure = s.plannedFailure(op)
	s.db.operations.add(id, op)
	ns.operations = append(ns.operations, op)
	heap.Push(&s.pending, op)
	s.renderOperation(op, now)
	return op
}

// pickupTime is when LCM takes up an operation accepted at now: after the pickup delay, and
// not before the pickup interval has passed since it took up the one before.
func (s *Server) pickupTime(now time.Time) time.Time {
	at := now.Add(s.pickupDelay)
	if s.pickupInterval > 0 && !s.lastPickup.IsZero() {
		at = maxTime(at, s.lastPickup.Add(s.pickupInterval))
	}
	s.lastPickup = at
	return at
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// runTime is how long LCM runs an operation of a type (Config.OperationDelays).
func (s *Server) runTime(kind string) time.Duration {
	if d, ok := s.cfg.OperationDelays[kind]; ok {
		return d
	}
	return s.operationDelay
}

// waitForRelated is one round of LCM's waitfor_related_HA: with no
// operation of the NS accepted before this one still PROCESSING, LCM starts
// it; else it writes how many there are (when that changed) and polls again
// after the poll interval, or fails the operation once its wait is over.
func (s *Server) waitForRelated(op *operationRecord, at time.Time) {
	related := 0
	for _, other := range op.ns.operations {
		if other.seq < op.seq && !other.removed && other.fields.OperationState == stateProcessing {
			related++
		}
	}
	if related == 0 {
		s.runOperation(op, at)
		return
	}
	if related != op.related {
		op.related = related
		op.fields.QueuePosition = &op.related
		op.fields.LCMDetailedStatus = fmt.Sprintf("Waiting for %d related tasks to be completed.", related)
		s.renderOperation(op, at)
	}
	op.waitLeft -= s.queuePoll
	if op.waitLeft < 0 {
		s.failWaiting(op, at)
		return
	}
	op.due = at.Add(s.queuePoll)
	heap.Push(&s.pending, op)
}

// failWaiting ends an operation that waited too long for the ones before
// it, as LCM does: FAILED with the timeout's text, the NS record untouched
// (LCM had not read it yet).
func (s *Server) failWaiting(op *operationRecord, at time.Time) {
	timeout := fmt.Sprintf("Timeout (%d) when waiting for related tasks to be completed", int64(s.queueTimeout/time.Second))
	message := fmt.Sprintf(lcmSteps[op.kind].queueFailure, timeout)
	op.fields.OperationState = stateFailed
	op.fields.StatusEnteredTime = epoch(at)
	op.fields.QueuePosition = new(int)
	op.fields.Stage = new("")
	op.fields.ErrorMessage = new(message)
	op.fields.LCMDetailedStatus = message
	if op.kind == opInstantiate || op.kind == opTerminate {
		op.fields.LCMDetailedStatus = timeout
	}
	s.renderOperation(op, at)
}

// runOperation plays LCM starting an operation: the NS shows it as its
// current operation (_write_ns_status) until it is due. Only instantiate and
// terminate write their stage into the operation as they start; action,
// update and scale leave it as the NBI, or the wait for related tasks, wrote
// it until they end (ns.py).
func (s *Server) runOperation(op *operationRecord, at time.Time) {
	ns := op.ns
	steps := lcmSteps[op.kind]
	op.phase = phaseRunning
	op.due = at.Add(s.runTime(op.kind))
	heap.Push(&s.pending, op)

	ns.current = op
	s.writeCurrentOperation(ns, steps.current, new(op.id))
	ns.fields.ErrorDescription, ns.fields.ErrorDetail = nil, nil
	if op.kind == opInstantiate || op.kind == opTerminate {
		op.fields.QueuePosition = new(int)
		op.fields.Stage = new(steps.stage)
		op.fields.LCMDetailedStatus = steps.stage
		ns.fields.DetailedStatus = steps.stage
	}
	switch op.kind {
	case opInstantiate:
		// LCM marks the NS instantiated as soon as it starts deploying.
		ns.fields.NsState = "BUILDING"
		ns.fields.Admin.NsState = "INSTANTIATED"
		for _, vnf := range ns.vnfs {
			vnf.fields.Admin.NsState = "INSTANTIATED"
			vnf.render(at)
		}
	case opTerminate:
		ns.fields.NsState = "TERMINATING"
	}
	ns.render(at)
	s.renderOperation(op, at)
}

// writeCurrentOperation writes what LCM's _write_ns_status writes of the
// current operation: currentOperation and its id, and the three _admin
// fields (nslcmop, current-operation, operation-type; null when IDLE).
func (s *Server) writeCurrentOperation(ns *nsRecord, current string, id *string) {
	ns.fields.CurrentOperation = current
	ns.fields.CurrentOperationID = id
	lcm := &LCMAdmin{Nslcmop: id, CurrentOperation: id}
	if current != "IDLE" {
		lcm.OperationType = new(current)
	}
	ns.fields.Admin.LCMAdmin = lcm
}

func (s *Server) renderOperation(op *operationRecord, now time.Time) {
	op.fields.Admin.Modified = epoch(now)
	op.doc = renderDoc(&op.fields)
}

// completeOperation ends an operation the way LCM would, successfully or
// with its planned failure, and updates the NS and VNF records.
func (s *Server) completeOperation(op *operationRecord, now time.Time) {
	if op.removed {
		return
	}
	ns := op.ns
	ns.current = nil
	s.writeCurrentOperation(ns, "IDLE", nil)
	op.fields.StatusEnteredTime = epoch(now)
	// _write_op_status, as every operation ends.
	op.fields.Stage = new("")
	op.fields.QueuePosition = new(int)

	var detailedStatus any = "Done"
	if op.failure == nil && op.action != nil && op.action.kdu != nil {
		outcome := runKDUAction(ns, op.action, s.cfg.Charts)
		if outcome.failure != "" {
			op.failure = &plannedFailure{state: stateFailed, message: outcome.failure}
		}
		detailedStatus = outcome.detailedStatus
	}
	if op.failure == nil && op.kind == opUpdate && op.fields.OperationParams.Str("updateType") == "CHANGE_VNFPKG" {
		failure, written := s.changeVNFPackage(op)
		if failure != "" {
			op.failure = &plannedFailure{state: stateFailed, message: failure}
		}
		if written != "" {
			detailedStatus = written
		} else {
			detailedStatus = op.fields.LCMDetailedStatus
		}
	}
	if op.failure == nil && op.kind == opInstantiate {
		op.failure = s.installKDUs(ns)
	}
	if op.failure != nil {
		op.fields.OperationState = op.failure.state
		op.fields.ErrorMessage = new(cmp.Or(op.failure.errorMessage, op.failure.message))
		op.fields.LCMDetailedStatus = op.failure.message
		s.failNS(op)
	} else {
		op.fields.OperationState = stateCompleted
		op.fields.LCMDetailedStatus = detailedStatus
		if op.kind == opAction || op.kind == opUpdate {
			// action() and update() write error_description_nslcmop, "" when
			// they complete.
			op.fields.ErrorMessage = new("")
		}
		if s.succeed(op, now) {
			return // the NS is gone, with its operations
		}
	}
	s.renderOperation(op, now)
	ns.render(now)
	for _, vnf := range ns.vnfs {
		vnf.render(now)
	}
}

// failNS records a failed operation on its NS: instantiate and terminate
// leave it BROKEN with the error; other operations leave the state alone
// and, as LCM's _write_ns_status does, clear the error fields.
func (s *Server) failNS(op *operationRecord) {
	ns := op.ns
	if op.kind != opInstantiate && op.kind != opTerminate {
		ns.fields.ErrorDescription, ns.fields.ErrorDetail = nil, nil
		return
	}
	description := fmt.Sprintf("Operation: %s.%s, %s", lcmSteps[op.kind].errorName, op.id, lcmSteps[op.kind].stage)
	ns.fields.NsState = "BROKEN"
	ns.fields.OperationalStatus = "failed"
	ns.fields.ErrorDescription = new(description)
	ns.fields.ErrorDetail = new(op.failure.message)
	ns.fields.DetailedStatus = description + " Detail: " + op.failure.message
}

// succeed applies a completed operation; it reports whether the NS was
// removed (a terminate with autoremove).
func (s *Server) succeed(op *operationRecord, now time.Time) bool {
	ns := op.ns
	ns.fields.ErrorDescription, ns.fields.ErrorDetail = nil, nil
	ns.fields.DetailedStatus = "Done"
	switch op.kind {
	case opInstantiate:
		ns.fields.NsState = "READY"
		ns.fields.OperationalStatus = "running"
		ns.fields.ConfigStatus = "configured"
		for _, vnf := range ns.vnfs {
			vnf.fields.Admin.NsState = "INSTANTIATED"
			for _, kdur := range vnf.fields.Kdur {
				kdur.KduInstance = kduInstanceName(ns, vnf, kdur)
				kdur.Status = "READY"
			}
		}
	case opTerminate:
		ns.fields.NsState = "NOT_INSTANTIATED"
		ns.fields.Admin.NsState = "NOT_INSTANTIATED"
		ns.fields.OperationalStatus = "terminated"
		ns.fields.ConfigStatus = "terminated"
		ns.fields.Admin.Deployed = &deployedDoc{K8s: []k8sDeploymentDoc{}, VCA: []any{}}
		for _, vnf := range ns.vnfs {
			vnf.fields.Admin.NsState = "NOT_INSTANTIATED"
			for _, kdur := range vnf.fields.Kdur {
				kdur.KduInstance, kdur.Status = "", ""
				kdur.release = nil
			}
		}
		if autoremove, _ := op.fields.OperationParams.Get("autoremove"); autoremove == true {
			if s.autoremoveDelay == 0 {
				s.removeNS(ns)
				return true
			}
			op.phase, op.due = phaseRemoving, now.Add(s.autoremoveDelay)
			heap.Push(&s.pending, op)
		}
	}
	return false
}

// deployments is the NS record's _admin.deployed.K8s after an instantiate.
func deployments(ns *nsRecord) []k8sDeploymentDoc {
	list := []k8sDeploymentDoc{}
	for _, vnf := range ns.vnfs {
		for _, kdur := range vnf.fields.Kdur {
			clusterType := "helm-chart-v3"
			if kdur.JujuBundle != "" {
				clusterType = "juju-bundle"
			}
			list = append(list, k8sDeploymentDoc{
				KduInstance: kduInstanceName(ns, vnf, kdur), K8sClusterUUID: kdur.K8sCluster.ID,
				KduDeploymentName: kdur.KduDeploymentName, K8sClusterType: clusterType,
				MemberVnfIndex: vnf.fields.MemberVnfIndexRef, KduName: kdur.KduName,
				KduModel: firstNonEmpty(kdur.HelmChart, kdur.JujuBundle), Namespace: kdur.K8sNamespace,
				Status: "Deployed",
			})
		}
	}
	return list
}

// postOperation serves POST .../ns_instances/{id}/{operation}, with the
// checks of the NBI's NsLcmOpTopic.new in its order.
func (s *Server) postOperation(c *call, kind string) (response, *nbiError) {
	params, err := c.jsonObject()
	if err != nil {
		return response{}, err
	}
	if old := params.Str("vnf_member_index"); old != "" && kind == opAction {
		params.Del("vnf_member_index") // the NBI's backward compatibility
		params.Set("member_vnf_index", old)
	}
	params.Set("lcmOperationType", kind)
	params.Set("nsInstanceId", c.param(0))
	if problem := operationSchemas[kind].validate(params); problem != nil {
		return response{}, errorf(http.StatusUnprocessableEntity, "%s", problem.formatError())
	}
	ns, err := s.findNS(c.param(0))
	if err != nil {
		return response{}, err
	}
	if !ns.instantiated() {
		if autoremove, _ := params.Get("autoremove"); kind == opTerminate && autoremove == true {
			// The NBI makes no operation and answers with nulls, the
			// Location naming the missing operation as Python prints None.
			answer := jsonResponse(http.StatusAccepted, python.NewDict("id", nil, "nsName", nil))
			return answer.withHeader("Location", "/osm/nslcm/v1/ns_lcm_op_occs/None"), nil
		}
		if kind != opInstantiate {
			return response{}, errorf(http.StatusConflict, "ns_instance '%s' cannot be '%s' because it is not instantiated", ns.id, kind)
		}
	} else if kind == opInstantiate && !forced(c.request) {
		return response{}, errorf(http.StatusConflict, "ns_instance '%s' cannot be '%s' because it is already instantiated", ns.id, kind)
	}
	// No check of the operations running on the NS: the NBI accepts the
	// operation and LCM queues it behind them (waitForRelated).
	var target *actionTarget
	switch kind {
	case opAction:
		if target, err = s.checkAction(ns, params); err != nil {
			return response{}, err
		}
	case opScale:
		if err := s.checkScale(ns, params); err != nil {
			return response{}, err
		}
	case opUpdate:
		if err := s.checkUpdate(ns, params); err != nil {
			return response{}, err
		}
	case opInstantiate:
		placement, err := s.placeVNFs(ns, params.Str("vimAccountId"))
		if err != nil {
			return response{}, err
		}
		s.applyPlacement(placement, params.Str("vimAccountId"), c.now)
	}
	serializeOperationParams(params)
	op := s.acceptOperation(ns, kind, params, target, c.now)
	answer := jsonResponse(http.StatusAccepted, python.NewDict("id", op.id, "nsName", ns.fields.Name))
	return answer.withHeader("Location", "/osm/nslcm/v1/ns_lcm_op_occs/"+op.id), nil
}

// serializeOperationParams stores the nested params of an operation as the
// NBI does: primitive_params, else additionalParamsForVnf, as a JSON string.
func serializeOperationParams(params *python.Dict) {
	if primitiveParams := params.Obj("primitive_params"); primitiveParams != nil && len(primitiveParams.Members) > 0 {
		params.Set("primitive_params", python.JSONDumps(primitiveParams))
	} else if vnfParams := params.List("additionalParamsForVnf"); len(vnfParams) > 0 {
		params.Set("additionalParamsForVnf", python.JSONDumps(vnfParams))
	}
}

// checkAction is the NBI's _check_action_ns_operation.
func (s *Server) checkAction(ns *nsRecord, params *python.Dict) (*actionTarget, *nbiError) {
	target := &actionTarget{primitive: params.Str("primitive"), params: params.Obj("primitive_params")}
	index := params.Str("member_vnf_index")
	var configs []any
	var configID string
	if index != "" {
		vnf, err := memberVNF(ns, index)
		if err != nil {
			return nil, err
		}
		target.vnf = vnf
		configs = dayOneTwoConfigs(vnf.vnfd.descriptor)
		configID = vnf.vnfd.descriptorID
		if vdu := params.Str("vdu_id"); vdu != "" {
			if findByKey(vnf.vnfd.descriptor.List("vdu"), "id", vdu) == nil {
				return nil, errorf(http.StatusBadRequest, "Invalid parameter vdu_id='%s' not present at vnfd:vdu:id", vdu)
			}
			configID = vdu
		} else if name := params.Str("kdu_name"); name != "" {
			if findKDU(vnf.vnfd.descriptor, name) == nil {
				return nil, errorf(http.StatusBadRequest, "Invalid parameter kdu_name='%s' not present at vnfd:kdu:name", name)
			}
			target.kdu = findKDUR(vnf, name)
			configID = name
		}
	}
	if params.Str("kdu_name") != "" && containsString(kduPrimitives, target.primitive) {
		if index == "" {
			return nil, errorf(http.StatusBadRequest, "Missing action parameter 'member_vnf_index' for default KDU primitive '%s'", target.primitive)
		}
		if target.primitive == "upgrade" {
			if _, err := formatParams(target.params, "primitive_params", true); err != nil {
				return nil, errorf(http.StatusBadRequest, "%v", err)
			}
		}
		return target, nil
	}
	var primitives []any
	if index != "" {
		primitives = findByKey(configs, "id", configID).List("config-primitive")
	} else {
		primitives = ns.nsd.descriptor.Obj("ns-configuration").List("config-primitive")
	}
	return target, checkPrimitive(primitives, target.primitive, target.params)
}

// checkPrimitive checks that a descriptor declares the primitive and that
// the params fit its parameters.
func checkPrimitive(primitives []any, name string, params *python.Dict) *nbiError {
	primitive := findByKey(primitives, "name", name)
	if primitive == nil {
		return errorf(http.StatusBadRequest, "Invalid primitive '%s' is not present at vnfd/nsd", name)
	}
	remaining := params.Clone()
	if remaining == nil {
		remaining = &python.Dict{}
	}
	for _, item := range primitive.List("parameter") {
		parameter, _ := item.(*python.Dict)
		if _, given := remaining.Get(parameter.Str("name")); given {
			remaining.Del(parameter.Str("name"))
		} else if _, hasDefault := parameter.Get("default-value"); !hasDefault {
			return errorf(http.StatusBadRequest, "Needed parameter %s not provided for primitive '%s'", parameter.Str("name"), name)
		}
	}
	if len(remaining.Members) > 0 {
		return errorf(http.StatusBadRequest, "parameter/s '%s' not present at vnfd /nsd for primitive '%s'", python.Repr(remaining.Keys()), name)
	}
	return nil
}

func dayOneTwoConfigs(vnfd *python.Dict) []any {
	dfs := vnfd.List("df")
	if len(dfs) == 0 {
		return nil
	}
	df, _ := dfs[0].(*python.Dict)
	return df.Obj("lcm-operations-configuration").Obj("operate-vnf-op-config").List("day1-2")
}

func memberVNF(ns *nsRecord, index string) (*vnfRecord, *nbiError) {
	for _, vnf := range ns.vnfs {
		if vnf.fields.MemberVnfIndexRef == index {
			return vnf, nil
		}
	}
	return nil, errorf(http.StatusBadRequest, "Invalid parameter member_vnf_index='%s' is not one of the nsd:constituent-vnfd", index)
}

func findKDUR(vnf *vnfRecord, name string) *kdurDoc {
	for _, kdur := range vnf.fields.Kdur {
		if kdur.KduName == name {
			return kdur
		}
	}
	return nil
}

// checkScale is the NBI's _check_scale_ns_operation.
func (s *Server) checkScale(ns *nsRecord, params *python.Dict) *nbiError {
	step := params.Obj("scaleVnfData").Obj("scaleByStepData")
	vnf, err := memberVNF(ns, step.Str("member-vnf-index"))
	if err != nil {
		return err
	}
	dfs := vnf.vnfd.descriptor.List("df")
	var df *python.Dict
	if len(dfs) > 0 {
		df, _ = dfs[0].(*python.Dict)
	}
	aspects, found := df.Get("scaling-aspect")
	if !found {
		// The NBI reads df[0]["scaling-aspect"]: a KeyError, which it
		// answers as a 400 with the key as the whole detail.
		return errorf(http.StatusBadRequest, "'scaling-aspect'")
	}
	list, _ := aspects.([]any)
	if findByKey(list, "id", step.Str("scaling-group-descriptor")) == nil {
		return errorf(http.StatusBadRequest, "Invalid scaleVnfData:scaleByStepData:scaling-group-descriptor '%s' is not present at vnfd:scaling-aspect",
			step.Str("scaling-group-descriptor"))
	}
	return nil
}

// checkUpdate is the NBI's _check_update_ns_operation for CHANGE_VNFPKG and
// REMOVE_VNF, then what NsLcmOpTopic.new adds to a CHANGE_VNFPKG: when the
// VNF record is behind its VNFD's revision and the software-version of that
// revision differs, the VNF's new VDU records (operationParams.newVdur; none
// for a KNF, whose VNFD has no vdu).
func (s *Server) checkUpdate(ns *nsRecord, params *python.Dict) *nbiError {
	switch params.Str("updateType") {
	case "CHANGE_VNFPKG":
		data := params.Obj("changeVnfPackageData")
		vnfID, vnfdID := data.Str("vnfInstanceId"), data.Str("vnfdId")
		if !containsString(ns.fields.ConstituentVnfrRef, vnfID) {
			return errorf(http.StatusUnprocessableEntity, "Error in validating ns-update request: vnf %s does not belong to NS %s", vnfID, ns.id)
		}
		vnf := findVNF(ns, vnfID)
		if vnf != nil && vnfdID != vnf.fields.VnfdID {
			return errorf(http.StatusUnprocessableEntity, "Error in validating ns-update request: vnfd-id %s does not match with the vnfd-id: %s of VNF instance: %s",
				vnfdID, vnf.fields.VnfdID, vnfID)
		}
		if timeout, given := params.Get("timeout_ns_update"); given {
			if seconds, err := strconv.ParseInt(fmt.Sprint(timeout), 10, 64); err == nil && seconds < 300 {
				return errorf(http.StatusUnprocessableEntity, "Error in validating ns-update request: %d second is not enough to upgrade the VNF instance: %s", seconds, vnfID)
			}
		}
		vnfd, found := s.db.vnfPackages.records.get(vnfdID)
		if !found {
			return errorf(http.StatusNotFound, "database exception Not found any vnfd with filter='%s'", python.Repr(python.NewDict("_id", vnfdID)))
		}
		if vnf != nil && vnf.fields.Revision != vnfd.revision && vnfd.softwareVersions[vnf.fields.Revision] != vnfd.softwareVersions[vnfd.revision] {
			params.Set("newVdur", []any{})
		}
	case "REMOVE_VNF":
		if vnf := params.Str("removeVnfInstanceId"); !containsString(ns.fields.ConstituentVnfrRef, vnf) {
			return errorf(http.StatusBadRequest, "Invalid VNF Instance Id. '%s' is not present in the NS '%s'", vnf, ns.id)
		}
	}
	return nil
}

// findVNF returns the VNF record id of ns, or nil.
func findVNF(ns *nsRecord, id string) *vnfRecord {
	for _, vnf := range ns.vnfs {
		if vnf.id == id {
			return vnf
		}
	}
	return nil
}

// changeVNFPackage carries out a CHANGE_VNFPKG update as LCM's ns.py update
// does for a VNF without charms: nothing when the VNF record has its VNFD's
// revision; else, with the same software-version, the record's revision
// moves ("Updating policies"); with another, LCM refuses an NS with SFC
// (vnffgd in its NSD) and otherwise redeploys the VNF's VDUs: it moves the
// record's revision and makes its connection points again from the VNFD, then
// fails a KNF, whose VNFD has no vdu (NS operational-status "failed", nsState
// unchanged). LCM touches no KDU: their Helm releases keep their charts. It
// returns LCM's failure text, "" when the update completes, and the
// detailed-status LCM writes ("" when it writes none).
func (s *Server) changeVNFPackage(op *operationRecord) (failure, detailedStatus string) {
	data := op.fields.OperationParams.Obj("changeVnfPackageData")
	vnf := findVNF(op.ns, data.Str("vnfInstanceId"))
	vnfd, found := s.db.vnfPackages.records.get(data.Str("vnfdId"))
	if vnf == nil || !found || vnf.fields.Revision == vnfd.revision {
		return "", ""
	}
	if vnfd.softwareVersions[vnf.fields.Revision] != vnfd.softwareVersions[vnfd.revision] {
		if len(op.ns.nsd.descriptor.List("vnffgd")) > 0 {
			return "FAILED Checking whether the descriptor has SFC: Ns update is not allowed for NS with SFC", ""
		}
		vnf.fields.ConnectionPoint = connectionPoints(vnfd.descriptor)
		vnf.fields.Vdur = []any{}
		vnf.fields.IPAddress = ""
		vnf.fields.Revision = vnfd.revision
		if _, hasVDUs := vnfd.descriptor.Get("vdu"); !hasVDUs {
			// _ns_redeploy_vnf has moved the record, then reads the VNFD's vdu: a KNF has none,
			// and the KeyError fails the update; update() marks the NS failed with its words.
			const failure = "Error updating VNF 'vdu'"
			op.ns.fields.OperationalStatus = "failed"
			op.ns.fields.DetailedStatus = failure
			return failure, ""
		}
	}
	vnf.fields.Revision = vnfd.revision
	return "", "Done"
}

// placement is where the VNFs of an NS go: the K8s cluster of each VNF
// with KDUs.
type placement map[*vnfRecord]*clusterRecord

// placeVNFs checks the VIM account and finds a K8s cluster for every VNF
// with KDUs, as the NBI's _check_valid_vim_account and _look_for_k8scluster
// do when an instantiate operation is created.
func (s *Server) placeVNFs(ns *nsRecord, vimID string) (placement, *nbiError) {
	vim, found := s.db.vims.get(vimID)
	if !found {
		return nil, errorf(http.StatusBadRequest, "Invalid vimAccountId='%s' not present for the project", vimID)
	}
	chosen := placement{}
	for _, vnf := range ns.vnfs {
		if len(vnf.fields.Kdur) == 0 {
			continue
		}
		cluster, requirements := pickCluster(vim.clusters, vnf.fields.K8sCluster)
		if cluster == nil {
			return nil, errorf(http.StatusBadRequest, "No k8scluster with requirements='%s' at vim_account=%s found for member_vnf_index=%s",
				python.Repr(requirements), vimID, vnf.fields.MemberVnfIndexRef)
		}
		chosen[vnf] = cluster
	}
	return chosen, nil
}

// pickCluster returns the first cluster meeting the VNF's K8s requirements
// (versions, number of networks) and the requirements it checked, which the
// NBI puts in its error message.
func pickCluster(clusters []*clusterRecord, wanted *python.Dict) (*clusterRecord, *python.Dict) {
	requirements := &python.Dict{}
	for _, cluster := range clusters {
		if wanted == nil {
			return cluster, requirements
		}
		if versions := wanted.List("version"); len(versions) > 0 {
			requirements.Set("version", versions)
			if !containsValue(versions, cluster.version) {
				continue
			}
		}
		if nets := wanted.List("nets"); len(nets) > 0 {
			requirements.Set("networks", json.Number(fmt.Sprint(len(nets))))
			if len(cluster.nets.Members) < len(nets) {
				continue
			}
		}
		return cluster, requirements
	}
	return nil, requirements
}

func containsValue(list []any, value string) bool {
	for _, item := range list {
		if item == value {
			return true
		}
	}
	return false
}

// applyPlacement writes the placement into the VNF records: the VIM
// account, each KDU's cluster and the cluster network of each K8s net.
func (s *Server) applyPlacement(chosen placement, vimID string, now time.Time) {
	for vnf, cluster := range chosen {
		for _, kdur := range vnf.fields.Kdur {
			kdur.K8sCluster.ID = cluster.id
		}
		free := cluster.nets.Keys()
		for _, item := range vnf.fields.K8sCluster.List("nets") {
			net, _ := item.(*python.Dict)
			name := net.Str("id")
			if !containsString(free, name) && len(free) > 0 {
				name = free[0]
			}
			vimNet, _ := cluster.nets.Get(name)
			net.Set("vim_net", vimNet)
			free = removeString(free, name)
		}
	}
	for vnf := range chosen {
		vnf.fields.VimAccountID = new(vimID)
		vnf.render(now)
	}
}

func removeString(list []string, s string) []string {
	for i, item := range list {
		if item == s {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// listOperations serves GET .../ns_lcm_op_occs, with ?nsInstanceId= and ?_id= indexed.
func (s *Server) listOperations(c *call) (response, *nbiError) {
	byNS := func(id string) []*operationRecord {
		if ns, found := s.db.nsInstances.get(id); found {
			return ns.operations
		}
		return nil
	}
	return listRecords(c, s.db.operations.all, index[*operationRecord]{"nsInstanceId", byNS}, index[*operationRecord]{"_id", s.db.operations.lookup}), nil
}

func (s *Server) getOperation(c *call) (response, *nbiError) {
	op, found := s.db.operations.get(c.param(0))
	if !found {
		return response{}, s.notFound(c.param(0))
	}
	return docResponse(op.doc), nil
}
