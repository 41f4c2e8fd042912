package nbisim

import (
	"cmp"
	"container/heap"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// OperationFailure makes chosen LCM operations end in failure instead of
// completing, as OSM does when a deployment goes wrong.
type OperationFailure struct {
	// Operation is an lcmOperationType (instantiate, terminate, action,
	// scale, update) or, for actions, a primitive (upgrade, rollback,
	// status); empty matches any operation.
	Operation string `json:"operation,omitempty"`
	// NSName limits the failure to NS instances of that name; empty matches any.
	NSName string `json:"nsName,omitempty"`
	// State is the final operationState: FAILED (the default) or FAILED_TEMP.
	State string `json:"state,omitempty"`
	// Message is the operation's errorMessage (and, for instantiate and
	// terminate, the NS record's errorDetail). Default DefaultFailureMessage.
	Message string `json:"message,omitempty"`
	// Count makes the failure apply to the next Count matching operations
	// only; 0 keeps it until the failures are cleared.
	Count int `json:"count,omitempty"`
}

// DefaultFailureMessage is the errorMessage of an injected failure without one.
const DefaultFailureMessage = "failure injected by the NBI simulator"

// FailOperations makes matching operations, from the next one created on,
// fail.
func (s *Server) FailOperations(f OperationFailure) error {
	switch f.State {
	case "":
		f.State = stateFailed
	case stateFailed, stateFailedTemp:
	default:
		return fmt.Errorf("operation failure: state %q is neither %s nor %s", f.State, stateFailed, stateFailedTemp)
	}
	if f.Count < 0 {
		return errors.New("operation failure: count must not be negative")
	}
	if f.Message == "" {
		f.Message = DefaultFailureMessage
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures.add(f, f.Count)
	return nil
}

// OperationFailures lists the active failures; Count is what remains of each.
func (s *Server) OperationFailures() []OperationFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures.list(func(f OperationFailure, remaining int) OperationFailure {
		f.Count = remaining
		return f
	})
}

// ClearOperationFailures removes every operation failure.
func (s *Server) ClearOperationFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures.clear()
}

// plannedFailure takes the first failure rule matching a new operation.
func (s *Server) plannedFailure(op *operationRecord) *plannedFailure {
	taken := s.failures.take(func(f OperationFailure) bool { return f.matches(op) }, true)
	if len(taken) == 0 {
		return nil
	}
	return &plannedFailure{state: taken[0].State, message: taken[0].Message}
}

func (f OperationFailure) matches(op *operationRecord) bool {
	kindMatches := f.Operation == "" || f.Operation == op.kind || op.action != nil && f.Operation == op.action.primitive
	return kindMatches && (f.NSName == "" || f.NSName == op.ns.fields.Name)
}

// HoldOperations keeps every operation PROCESSING, past its delay, until
// ReleaseOperations or CompleteOperations.
func (s *Server) HoldOperations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
}

// ReleaseOperations lets operations complete again; those already due
// complete at the next request.
func (s *Server) ReleaseOperations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
}

// CompleteOperations ends every pending operation now, held or not, in the
// order the NBI accepted them (LCM's order on each NS), and returns how many
// it ended.
func (s *Server) CompleteOperations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	pending := slices.SortedFunc(slices.Values(s.pending), func(a, b *operationRecord) int { return cmp.Compare(a.seq, b.seq) })
	s.pending = nil
	completed := 0
	for _, op := range pending {
		if op.phase == phaseRemoving && !op.removed {
			s.removeNS(op.ns) // LCM's message reaches the NBI now
		}
		if op.removed || op.fields.OperationState != stateProcessing {
			continue
		}
		if op.phase != phaseRunning {
			s.runOperation(op, now)
			heap.Remove(&s.pending, op.queueIndex)
		}
		completed++
		s.completeOperation(op, now)
	}
	return completed
}

// Settings are the simulator's settings that can change at run time.
type Settings struct {
	OperationDelay time.Duration
	TokenLifetime  time.Duration
	OperationsHeld bool
}

// Settings returns the current settings.
func (s *Server) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Settings{OperationDelay: s.operationDelay, TokenLifetime: s.tokenLifetime, OperationsHeld: s.held}
}

// SetOperationDelay changes how long new operations stay PROCESSING; zero
// makes them complete at the next request.
func (s *Server) SetOperationDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.operationDelay = max(d, 0)
}

// SetPickupDelay changes how long LCM takes to take up the operations the
// NBI accepts from now on (Config.PickupDelay): a slow or busy LCM.
func (s *Server) SetPickupDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pickupDelay = max(d, 0)
}

// PublishChart adds a chart version to a repository of the catalog
// (ChartCatalog.AddChart), as a chart's maintainers publish one: LCM's next
// installs and upgrades see it.
func (s *Server) PublishChart(entry string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Charts.AddChart(entry)
}

// SetAutoremoveDelay changes how long the NS records of the terminates that
// complete from now on stay before the NBI removes them (Config.AutoremoveDelay).
func (s *Server) SetAutoremoveDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoremoveDelay = max(d, 0)
}

// SetTokenLifetime changes the lifetime of new tokens.
func (s *Server) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d > 0 {
		s.tokenLifetime = d
	}
}

// Reset empties the NBI's state: tokens, packages, NS instances and their
// operations go, the user's failed logins and lock too, and the configured
// VIM accounts come back. Stats, faults, operation failures and settings
// stay (they have their own resets).
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

func (s *Server) resetLocked() {
	for _, op := range s.pending {
		op.removed = true
	}
	s.pending = nil
	s.lastPickup = time.Time{}
	s.db = newDatabase()
	s.tokens = map[string]*token{}
	now := s.now()
	s.account = newUser(s.userID, s.cfg.Username, s.cfg.Password, []projectRole{{s.projectID, s.roleIDs["system_admin"]}}, now)
	for _, account := range s.cfg.VIMAccounts {
		s.seedVIM(account, now)
	}
}

// State is a summary of the NBI's state, for tests and people.
type State struct {
	ProjectID         string            `json:"projectId"`
	VIMAccounts       []VIMAccountState `json:"vimAccounts"`
	Packages          []PackageState    `json:"packages"`
	NSInstances       []NSInstanceState `json:"nsInstances"`
	PendingOperations int               `json:"pendingOperations"`
	OperationsHeld    bool              `json:"operationsHeld"`
	Tokens            int               `json:"tokens"`
	Users             []UserState       `json:"users"`
}

// VIMAccountState is a VIM account and its K8s clusters.
type VIMAccountState struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	K8sClusters []string `json:"k8sClusters"`
}

// PackageState is a VNF or NS package.
type PackageState struct {
	// Kind is "vnf" or "ns".
	Kind         string `json:"kind"`
	ID           string `json:"id"`
	DescriptorID string `json:"descriptorId"`
	Revision     int    `json:"revision"`
	UsageState   string `json:"usageState"`
	// TarballDigest is "sha256:<hex>" of the tarball last uploaded.
	TarballDigest string `json:"tarballDigest"`
}

// NSInstanceState is an NS instance, its KDUs with their values, and its operations.
type NSInstanceState struct {
	ID               string           `json:"id"`
	Name             string           `json:"name"`
	NsdID            string           `json:"nsdId"`
	NSState          string           `json:"nsState"`
	CurrentOperation string           `json:"currentOperation"`
	ErrorDetail      string           `json:"errorDetail,omitempty"`
	KDUs             []KDUState       `json:"kdus"`
	Operations       []OperationState `json:"operations"`
}

// KDUState is a KDU of an NS instance.
type KDUState struct {
	MemberVnfIndex string `json:"memberVnfIndex"`
	Name           string `json:"name"`
	// Model is the chart (or bundle) the KDU's Helm release runs: the
	// kdu_model of the last upgrade that gave one, else the record's.
	Model     string `json:"model"`
	Namespace string `json:"namespace"`
	// K8sClusterID is the OSM K8s cluster the KDU is placed on.
	K8sClusterID string `json:"k8sClusterId,omitempty"`
	// Params are the values the KDU's Helm release runs with (what "helm
	// get values" shows), after the upgrades and rollbacks LCM ran; null
	// when there are none or the KDU is not deployed.
	Params json.RawMessage `json:"params"`
	// ChartVersion is the version of the chart the release runs, as Helm
	// took it from the repository's index (Config.Charts); "" for a chart
	// of a repository the catalog does not list.
	ChartVersion string `json:"chartVersion,omitempty"`
	// Revision is the revision of the KDU's Helm release, 0 when the KDU
	// is not deployed.
	Revision int `json:"revision"`
	// RecordModel is the chart (or bundle) of the VNF record's kdur, which
	// LCM never changes after the instantiation.
	RecordModel string `json:"recordModel"`
	// RecordParams is what the VNF record's kdur additionalParams holds:
	// the JSON document of the instantiation's values, nested values as
	// "!!yaml ..." strings, which LCM never changes; null when there are
	// none.
	RecordParams json.RawMessage `json:"recordParams"`
}

// OperationState is an LCM operation.
type OperationState struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// Primitive is the primitive of an action.
	Primitive    string `json:"primitive,omitempty"`
	State        string `json:"state"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Accepted is when the NBI accepted the operation (its startTime); Ended when LCM marked
	// it COMPLETED or FAILED (its statusEnteredTime then), null while it is PROCESSING. The
	// benchmark measures from them how long OSM itself took, and how soon a client saw the end.
	Accepted time.Time  `json:"accepted"`
	Ended    *time.Time `json:"ended,omitempty"`
}

// State returns a summary of the NBI's state, after moving due operations forward.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	state := State{
		ProjectID: s.projectID, PendingOperations: len(s.pending), OperationsHeld: s.held, Tokens: len(s.tokens),
		Users: s.userStates(),
	}
	for _, vim := range s.db.vims.all() {
		clusters := []string{}
		for _, cluster := range vim.clusters {
			clusters = append(clusters, cluster.id)
		}
		state.VIMAccounts = append(state.VIMAccounts, VIMAccountState{ID: vim.id, Name: vim.name, Type: vim.content.Str("vim_type"), K8sClusters: clusters})
	}
	for _, store := range []*packageStore{s.db.vnfPackages, s.db.nsPackages} {
		for _, p := range store.records.all() {
			state.Packages = append(state.Packages, PackageState{
				Kind: string(p.kind.kind), ID: p.id, DescriptorID: p.descriptorID, Revision: p.revision, UsageState: p.usageState(),
				TarballDigest: fmt.Sprintf("sha256:%x", sha256.Sum256(p.tarball)),
			})
		}
	}
	for _, ns := range s.db.nsInstances.all() {
		state.NSInstances = append(state.NSInstances, nsState(ns))
	}
	return state
}

func nsState(ns *nsRecord) NSInstanceState {
	summary := NSInstanceState{
		ID: ns.id, Name: ns.fields.Name, NsdID: ns.nsd.descriptorID, NSState: ns.fields.NsState,
		CurrentOperation: ns.fields.CurrentOperation, KDUs: []KDUState{}, Operations: []OperationState{},
	}
	if ns.fields.ErrorDetail != nil {
		summary.ErrorDetail = *ns.fields.ErrorDetail
	}
	for _, vnf := range ns.vnfs {
		for _, kdur := range vnf.fields.Kdur {
			kdu := KDUState{
				MemberVnfIndex: vnf.fields.MemberVnfIndexRef, Name: kdur.KduName,
				Model: kduModel(kdur), Namespace: kdur.K8sNamespace, K8sClusterID: kdur.K8sCluster.ID,
				Params: json.RawMessage("null"), RecordModel: kduModel(kdur), RecordParams: json.RawMessage("null"),
			}
			if kdur.release != nil {
				current := kdur.release.current()
				kdu.Model, kdu.ChartVersion, kdu.Revision = current.chart, current.version, len(kdur.release.revisions)
				if len(current.values.Members) > 0 {
					kdu.Params, _ = json.Marshal(current.values)
				}
			}
			if kdur.AdditionalParams != nil {
				kdu.RecordParams = json.RawMessage(*kdur.AdditionalParams)
			}
			summary.KDUs = append(summary.KDUs, kdu)
		}
	}
	for _, op := range ns.operations {
		operation := OperationState{ID: op.id, Type: op.kind, State: op.fields.OperationState, Accepted: op.fields.StartTime.time()}
		if op.fields.OperationState != stateProcessing {
			operation.Ended = new(op.fields.StatusEnteredTime.time())
		}
		if op.action != nil {
			operation.Primitive = op.action.primitive
		}
		if op.fields.ErrorMessage != nil {
			operation.ErrorMessage = *op.fields.ErrorMessage
		}
		summary.Operations = append(summary.Operations, operation)
	}
	return summary
}
