package engine

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// StartedOperation is an OSM LCM operation the apply started.
type StartedOperation struct {
	ID         string
	Type       string
	NsInstance string
	// MoreUpgrades: other KDUs of the instance wait for this upgrade (NsAction.MoreUpgrades).
	MoreUpgrades bool
	// Rollback: the upgrade puts a KDU back to its last good values (NsAction.Rollback).
	Rollback bool
}

// Action is a kind of change the engine asks of OSM.
type Action int

// The actions of an apply.
const (
	ActionCreatePackage Action = iota
	ActionUpdatePackage
	ActionMarkPackage
	ActionCreateNSInstance
	ActionUpgradeNSInstance
	ActionDeleteNSInstance
	ActionMoveVNFPackage
	// actionCount is the number of actions; it sizes actionWords.
	actionCount
)

// actionWords says each action in words. Its length must be actionCount: an action added
// without its words leaves the array short and the two checks below fail to compile.
var actionWords = [...]string{
	ActionCreatePackage:     "create package",
	ActionUpdatePackage:     "update package",
	ActionMarkPackage:       "mark package",
	ActionCreateNSInstance:  "create NS instance",
	ActionUpgradeNSInstance: "upgrade NS instance",
	ActionDeleteNSInstance:  "delete NS instance",
	ActionMoveVNFPackage:    "move VNF package",
}

var (
	_ [len(actionWords) - int(actionCount)]struct{}
	_ [int(actionCount) - len(actionWords)]struct{}
)

// String says the action in words, for messages; never panics, whatever the value.
func (a Action) String() string {
	if a < 0 || a >= actionCount {
		return fmt.Sprintf("action %d", int(a))
	}
	return actionWords[a]
}

// ActionError is an action OSM refused or that did not reach OSM.
type ActionError struct {
	// Subject is the package descriptor id or the NS instance name.
	Subject string
	Action  Action
	Err     error
}

func (e ActionError) Error() string { return fmt.Sprintf("%s %s: %v", e.Action, e.Subject, e.Err) }

func (e ActionError) Unwrap() error { return e.Err }

// Result is what OSM answered to an applied plan.
type Result struct {
	// Packages maps the descriptor ids of the packages OSM accepted (created or updated) to
	// OSM's _id; a planned package missing here was refused or not sent.
	Packages map[string]string
	// NsInstanceIDs maps the names of the NS instances created to OSM's _id.
	NsInstanceIDs map[string]string
	Operations    []StartedOperation
	Errors        []ActionError
}

// Apply sends the plan to OSM: packages one by one in dependency order, then every NS action
// with at most parallelism requests in flight. It keeps going after a failed NS action (the
// others are independent) but stops after a failed package, which later steps may need.
func Apply(ctx context.Context, nbi OSM, plan *Plan, observed *Observed, parallelism int) *Result {
	r := &Result{Packages: map[string]string{}, NsInstanceIDs: map[string]string{}}
	nsdIDs := map[string]string{}
	for id, nsd := range observed.NSDs {
		nsdIDs[id] = nsd.ID
	}
	for _, action := range plan.Packages {
		id, uploaded, err := applyPackage(ctx, nbi, action, plan.Owner)
		if id != "" {
			r.Packages[action.Package.Descriptor.ID] = id
		}
		if err != nil {
			failed := packageAction(action)
			if uploaded {
				failed = ActionMarkPackage // the upload went through: later steps may go on
			}
			r.Errors = append(r.Errors, ActionError{Subject: action.Package.Descriptor.ID, Action: failed, Err: err})
			if id == "" {
				return r // not in OSM with this content: later steps may need it
			}
		}
		if action.Package.Descriptor.Kind == osmpkg.KindNS {
			nsdIDs[action.Package.Descriptor.ID] = id
		}
	}

	var mu sync.Mutex
	record := func(op StartedOperation, created string, err ActionError) {
		mu.Lock()
		defer mu.Unlock()
		if err.Err != nil {
			r.Errors = append(r.Errors, err)
			return
		}
		if created != "" {
			r.NsInstanceIDs[op.NsInstance] = created
		}
		if op.ID != "" {
			r.Operations = append(r.Operations, op)
		}
	}
	group, groupCtx := errgroup.WithContext(ctx)
	group.SetLimit(max(parallelism, 1))
	for _, action := range plan.Creates {
		group.Go(func() error {
			request := CreateRequest(action.Instance, nsdIDs[action.Instance.NsdName], observed.VIMAccounts[action.Instance.VimAccountName], plan.Owner)
			created, err := nbi.CreateNSInstance(groupCtx, request)
			if err != nil {
				record(StartedOperation{}, "", ActionError{Subject: action.Name, Action: ActionCreateNSInstance, Err: err})
				return nil
			}
			record(StartedOperation{ID: created.OperationID, Type: osm.OperationTypeInstantiate, NsInstance: action.Name}, created.ID, ActionError{})
			return nil
		})
	}
	for _, action := range plan.Upgrades {
		group.Go(func() error {
			opID, err := nbi.UpgradeKDU(groupCtx, action.ID, UpgradeRequest(action.Member, action.KDU, action.Chart))
			record(StartedOperation{ID: opID, Type: osm.OperationTypeAction, NsInstance: action.Name, MoreUpgrades: action.MoreUpgrades, Rollback: action.Rollback}, "",
				ActionError{Subject: action.Name, Action: ActionUpgradeNSInstance, Err: err})
			return nil
		})
	}
	for _, action := range plan.PackageMoves {
		group.Go(func() error {
			opID, err := nbi.ChangeVNFPackage(groupCtx, action.ID, action.Change)
			record(StartedOperation{ID: opID, Type: osm.OperationTypeUpdate, NsInstance: action.Name}, "",
				ActionError{Subject: action.Name, Action: ActionMoveVNFPackage, Err: err})
			return nil
		})
	}
	for _, action := range plan.Deletes {
		group.Go(func() error {
			opID, err := nbi.DeleteNSInstance(groupCtx, action.ID, action.Force)
			record(StartedOperation{ID: opID, Type: osm.OperationTypeTerminate, NsInstance: action.Name}, "",
				ActionError{Subject: action.Name, Action: ActionDeleteNSInstance, Err: err})
			return nil
		})
	}
	_ = group.Wait() // the goroutines record their errors; none is returned
	return r
}

// applyPackage uploads a package (unless the action only marks it) and marks it as the
// owner's. A failed mark leaves the upload done: it is returned with the package's id, and the
// next plan marks the package without uploading it again.
func applyPackage(ctx context.Context, nbi OSM, action PackageAction, owner Owner) (id string, uploaded bool, err error) {
	id = action.ID
	switch {
	case action.MarkOnly:
	case id == "":
		if id, err = nbi.CreatePackage(ctx, action.Package.Package); err != nil {
			return "", false, err
		}
		uploaded = true
	default:
		if err = nbi.UpdatePackage(ctx, id, action.Package.Package); err != nil {
			return "", false, err
		}
		uploaded = true
	}
	data := PackageUserData(owner, action.Package.Digest, action.Revision)
	return id, uploaded, nbi.SetPackageUserData(ctx, action.Package.Descriptor.Kind, id, data)
}

// packageAction is what a package action asks of OSM.
func packageAction(action PackageAction) Action {
	switch {
	case action.MarkOnly:
		return ActionMarkPackage
	case action.ID == "":
		return ActionCreatePackage
	}
	return ActionUpdatePackage
}
