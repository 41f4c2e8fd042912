package osm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/osmops/osmops/internal/osmpkg"
)

// Version returns the NBI's version; it needs no authentication. An answer naming a version
// is half of the endpoint's proof that it is an OSM NBI (see Client.proven).
func (c *Client) Version(ctx context.Context) (*Version, error) {
	version, err := fetch[Version](ctx, c, versionRequest())
	if err == nil && version.Version != "" {
		c.answeredVersion.Store(true)
	}
	return version, err
}

// fetch sends req and decodes its answer, one record or an answer small by nature, into a new T.
func fetch[T any](ctx context.Context, c *Client, req request) (*T, error) {
	decoded := new(T)
	if err := c.doAuthenticated(ctx, req, oneObject(maxRecordBytes(decoded), decoded)); err != nil {
		return nil, err
	}
	return decoded, nil
}

// list sends a GET whose answer is a JSON list, and returns the records keep accepts (all of
// them when keep is nil).
func list[T any](ctx context.Context, c *Client, req request, keep func(*T) bool) ([]T, error) {
	var items []T
	if err := c.doAuthenticated(ctx, req, listOf(c.maxResponseBytes, keep, budgetOf(ctx), &items)); err != nil {
		return nil, err
	}
	return items, nil
}

// GetProject returns the Client's project, with its quotas: any member of a project may read it.
func (c *Client) GetProject(ctx context.Context) (*Project, error) {
	return fetch[Project](ctx, c, projectRequest(c.credentials.Project))
}

// ListVIMAccounts returns every VIM account of the project.
func (c *Client) ListVIMAccounts(ctx context.Context) ([]VIMAccount, error) {
	return list[VIMAccount](ctx, c, listVIMAccountsRequest(), nil)
}

// ListNSDescriptors returns every NS descriptor of the project.
func (c *Client) ListNSDescriptors(ctx context.Context) ([]NSDescriptor, error) {
	return list[NSDescriptor](ctx, c, listNSDescriptorsRequest(), nil)
}

// ListVNFDescriptors returns every VNF descriptor of the project.
func (c *Client) ListVNFDescriptors(ctx context.Context) ([]VNFDescriptor, error) {
	return list[VNFDescriptor](ctx, c, listVNFDescriptorsRequest(), nil)
}

// ListNSInstances returns the NS instances with one of the names (names are
// not unique), or every NS instance when no name is given.
func (c *Client) ListNSInstances(ctx context.Context, names ...string) ([]NSInstance, error) {
	return listMembers(ctx, c, listNSInstancesRequest(), "name", names, func(ns *NSInstance) string { return ns.Name })
}

// ListNSInstancesByParam returns the NS instances whose additionalParamsForNs holds key with
// the string value.
func (c *Client) ListNSInstancesByParam(ctx context.Context, key, value string) ([]NSInstance, error) {
	req := listNSInstancesRequest()
	if query, exact := memberFilter("additionalParamsForNs."+key, []string{value}); exact {
		req.query = query
	}
	return list(ctx, c, req, func(ns *NSInstance) bool { return string(ns.AdditionalParamsForNs[key]) == value })
}

// ListVNFInstances returns the VNF records of the NS instances with these
// ids, or every VNF record when no id is given.
func (c *Client) ListVNFInstances(ctx context.Context, nsInstanceIDs ...string) ([]VNFInstance, error) {
	return listMembers(ctx, c, listVNFInstancesRequest(), "nsr-id-ref", nsInstanceIDs, func(v *VNFInstance) string { return v.NSInstanceID })
}

// CreatePackage uploads a new package and returns OSM's id of its descriptor.
func (c *Client) CreatePackage(ctx context.Context, pkg *osmpkg.Package) (string, error) {
	req, err := createPackageRequest(pkg)
	if err != nil {
		return "", err
	}
	return c.doForID(ctx, req)
}

// UpdatePackage replaces the whole content of the package with OSM id id.
func (c *Client) UpdatePackage(ctx context.Context, id string, pkg *osmpkg.Package) error {
	req, err := updatePackageRequest(id, pkg)
	if err != nil {
		return err
	}
	return c.do(ctx, req)
}

// SetPackageUserData writes keys of the user data OSM keeps with a package, leaving its other
// keys, its content and its revision as they are.
func (c *Client) SetPackageUserData(ctx context.Context, kind osmpkg.Kind, id string, data map[string]string) error {
	req, err := packageUserDataRequest(kind, id, data)
	if err != nil {
		return err
	}
	return c.do(ctx, req)
}

// CreateNSInstance creates and instantiates an NS instance.
func (c *Client) CreateNSInstance(ctx context.Context, create NSInstanceCreate) (*NSInstanceCreated, error) {
	req, err := createNSInstanceRequest(create)
	if err != nil {
		return nil, err
	}
	return fetch[NSInstanceCreated](ctx, c, req)
}

// UpgradeKDU changes the Helm values of a KDU and returns the LCM operation id.
func (c *Client) UpgradeKDU(ctx context.Context, nsInstanceID string, upgrade KDUUpgrade) (string, error) {
	req, err := upgradeKDURequest(nsInstanceID, upgrade)
	if err != nil {
		return "", err
	}
	return c.doForOperation(ctx, req)
}

// ChangeVNFPackage moves a VNF of an NS instance to its package's current revision (OSM's NS
// update CHANGE_VNFPKG) and returns the LCM operation id.
func (c *Client) ChangeVNFPackage(ctx context.Context, nsInstanceID string, change VNFPackageChange) (string, error) {
	req, err := changeVNFPackageRequest(nsInstanceID, change)
	if err != nil {
		return "", err
	}
	return c.doForOperation(ctx, req)
}

// DeleteNSInstance terminates and removes an NS instance and returns the
// LCM operation id. With force OSM deletes the record at once, with no
// operation: the id is then "".
func (c *Client) DeleteNSInstance(ctx context.Context, id string, force bool) (string, error) {
	// The NBI answers {"_id": <operation id>, "nsName": ...} here (nbi.py, DELETE of
	// ns_instances_content), not the {"id": ...} of its other operation answers.
	var decoded deletionAnswer
	err := c.doAuthenticated(ctx, deleteNSInstanceRequest(id, force), answerReading{maxBytes: maxSmallAnswerBytes,
		decoded: &decoded,
		read: func(status int, body *answerBody) error {
			data, err := io.ReadAll(body)
			if err != nil || len(bytes.TrimSpace(data)) == 0 {
				return err
			}
			if err := json.Unmarshal(data, &decoded); err != nil {
				return body.jsonError(status, err)
			}
			if decoded.ID == "" {
				// An operation that cannot be followed would let a failed terminate pass unseen.
				return fmt.Errorf("the %d answer names no operation (_id)", status)
			}
			return nil
		}})
	return decoded.ID, err
}

// doForID sends req and returns the id of its {"id": ...} answer: what OSM created.
func (c *Client) doForID(ctx context.Context, req request) (string, error) {
	answer, err := fetch[idAnswer](ctx, c, req)
	if err != nil {
		return "", err
	}
	return answer.ID, nil
}

// doForOperation sends req and returns the id of its {"id": ...} answer: the LCM operation it
// started.
func (c *Client) doForOperation(ctx context.Context, req request) (string, error) {
	answer, err := fetch[operationAnswer](ctx, c, req)
	if err != nil {
		return "", err
	}
	return answer.ID, nil
}

// ListCompletedActions returns the completed LCM actions (KDU upgrades, rollbacks and other
// primitives) of the NS instances with these ids, in one request. OSM's LCM never writes an
// upgrade's values into the VNF record, so these records are where the values a KDU runs with
// after its instantiation are found (see Operation.KDUAction).
func (c *Client) ListCompletedActions(ctx context.Context, nsInstanceIDs ...string) ([]Operation, error) {
	if len(nsInstanceIDs) == 0 {
		return nil, nil
	}
	return listMembers(ctx, c, completedOperationsRequest(OperationTypeAction), "nsInstanceId", nsInstanceIDs, func(op *Operation) string { return op.NSInstanceID })
}

// ListCompletedTerminates returns the completed terminates of the NS instances with these ids,
// in one request: a terminated record whose terminate asked for autoremove is about to be
// removed by OSM itself (the NBI does it when LCM's message reaches it).
func (c *Client) ListCompletedTerminates(ctx context.Context, nsInstanceIDs ...string) ([]Operation, error) {
	if len(nsInstanceIDs) == 0 {
		return nil, nil
	}
	return listMembers(ctx, c, completedOperationsRequest(OperationTypeTerminate), "nsInstanceId", nsInstanceIDs, func(op *Operation) string { return op.NSInstanceID })
}

// ListNSOperations returns every LCM operation of the NS instances with these ids, whatever
// its state, in one request: what `osmops trace` shows of each instance. OSM keeps an
// instance's operations for as long as the instance, so the answer grows with its age; the
// client's bounds on an answer hold.
func (c *Client) ListNSOperations(ctx context.Context, nsInstanceIDs ...string) ([]Operation, error) {
	if len(nsInstanceIDs) == 0 {
		return nil, nil
	}
	req := getRequest("/nslcm/v1/ns_lcm_op_occs", "/nslcm/v1/ns_lcm_op_occs", nil)
	return listMembers(ctx, c, req, "nsInstanceId", nsInstanceIDs, func(op *Operation) string { return op.NSInstanceID })
}
