package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/osmops/osmops/internal/engine"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/osmpkg"
)

// CLIPattern sends what the `osm` command-line client sends, command by command, as
// the project's NBI notes count it: every command is a new process with a new token
// and new connections; it finds objects by name by listing their whole collection; there is
// one command per NS instance. A command returns once OSM accepted its request, as the CLI
// does by default; with Wait (`--wait`) it then reads the operation (GET ns_lcm_op_occs/{id})
// at once, then after each PollInterval, until it has finished.
//
// It speaks the NBI's wire format itself rather than through the operator's client
// (internal/osm), whose whole point is not to send this pattern. The request bodies are the
// operator's own (engine.CreateRequest, the same package tarballs), so that only the pattern
// differs. The large lists the CLI would search for one name are read and discarded, the ids
// coming from the creates' answers: that spares the benchmark machine the decoding and keeps
// the baseline's wall time a lower bound of the real CLI's.
type CLIPattern struct {
	// NBI is the simulator's base URL; the NBI is under NBI+"/osm".
	NBI         string
	Credentials osm.Credentials
	// Wait adds `--wait` to the commands that start an LCM operation.
	Wait bool
	// PollInterval is --wait's pause between two reads of an operation: osmclient's is 5 s
	// (POLLING_TIME_INTERVAL of osmclient/common/wait.py, raised from 1 s to 5 s in its commit
	// 46ee9d6, "wait.py: updated POLLING_TIME_INTERVAL to 5s for --wait option", and so in
	// release 8), whose wait_for_status reads the operation at once, then sleeps that long
	// between reads until the operation has finished (for a delete, until the read answers 404).
	PollInterval time.Duration
	// Parallelism is how many commands run at once, as a script would with `xargs -P`.
	Parallelism int

	mu sync.Mutex
	// ids maps NS instance names to OSM ids, from the answers of the creates.
	ids map[string]string
}

// NBI routes the CLI pattern uses.
const (
	tokensPath      = "/osm/admin/v1/tokens"
	vimAccountsPath = "/osm/admin/v1/vim_accounts"
	nsdListPath     = "/osm/nsd/v1/ns_descriptors"
	nsInstancesPath = "/osm/nslcm/v1/ns_instances_content"
	nsActionPath    = "/osm/nslcm/v1/ns_instances/%s/action"
	operationPath   = "/osm/nslcm/v1/ns_lcm_op_occs/"
	vnfPackagesPath = "/osm/vnfpkgm/v1/vnf_packages_content"
	nsPackagesPath  = "/osm/nsd/v1/ns_descriptors_content"
)

// CreatePackages runs `osm nfpkg-create` or `osm nspkg-create` for each package, in order
// (an NS package needs its VNF packages first): a token, then the upload.
func (c *CLIPattern) CreatePackages(ctx context.Context, packages []gitops.Package) error {
	for _, pkg := range packages {
		err := c.command(ctx, func(cmd *cliCommand) error {
			create := vnfPackagesPath
			if pkg.Descriptor.Kind == osmpkg.KindNS {
				create = nsPackagesPath
			}
			return cmd.upload(ctx, create, pkg)
		})
		if err != nil {
			return fmt.Errorf("creating package %s: %w", pkg.Descriptor.ID, err)
		}
	}
	return nil
}

// CreateInstances runs `osm ns-create` for each instance: a token, all NSDs, all VIM
// accounts, the VIM account, the create, then with Wait the wait.
func (c *CLIPattern) CreateInstances(ctx context.Context, instances []gitops.NsInstance) error {
	return c.each(ctx, instances, "creating", func(cmd *cliCommand, ns gitops.NsInstance) error {
		var nsds []osm.NSDescriptor
		if err := cmd.send(ctx, http.MethodGet, nsdListPath, &nsds); err != nil {
			return err
		}
		var vims []osm.VIMAccount
		if err := cmd.send(ctx, http.MethodGet, vimAccountsPath, &vims); err != nil {
			return err
		}
		nsdID, vimID := findID(nsds, ns.NsdName, func(d osm.NSDescriptor) (string, string) { return d.DescriptorID, d.ID }),
			findID(vims, ns.VimAccountName, func(v osm.VIMAccount) (string, string) { return v.Name, v.ID })
		if nsdID == "" || vimID == "" {
			return fmt.Errorf("OSM has no NSD %s or no VIM account %s", ns.NsdName, ns.VimAccountName)
		}
		if err := cmd.send(ctx, http.MethodGet, vimAccountsPath+"/"+url.PathEscape(vimID), nil); err != nil {
			return err
		}
		var created osm.NSInstanceCreated
		request := engine.CreateRequest(ns, nsdID, vimID, engine.Owner{})
		request.AdditionalParamsForNs = nil // the CLI marks no owner
		if err := cmd.sendJSON(ctx, http.MethodPost, nsInstancesPath, request, &created); err != nil {
			return err
		}
		c.setID(ns.Name, created.ID)
		return c.wait(ctx, cmd, created.OperationID, false)
	})
}

// UpgradeInstances runs `osm ns-action --action_name upgrade` for each instance: a token, the
// whole NS instance list twice, the action, then with Wait the wait.
func (c *CLIPattern) UpgradeInstances(ctx context.Context, instances []gitops.NsInstance) error {
	return c.each(ctx, instances, "upgrading", func(cmd *cliCommand, ns gitops.NsInstance) error {
		id, err := c.lookUpInstance(ctx, cmd, ns.Name, 2)
		if err != nil {
			return err
		}
		upgrade := engine.UpgradeRequest(ns.VnfName, ns.KDU, ns.KDU.Model)
		body := map[string]any{
			"member_vnf_index": upgrade.MemberVnfIndex, "kdu_name": upgrade.KDUName,
			"primitive": "upgrade", "primitive_params": upgrade.Params,
		}
		var started struct {
			ID string `json:"id"`
		}
		if err := cmd.sendJSON(ctx, http.MethodPost, fmt.Sprintf(nsActionPath, url.PathEscape(id)), body, &started); err != nil {
			return err
		}
		return c.wait(ctx, cmd, started.ID, false)
	})
}

// DeleteInstances runs `osm ns-delete` for each instance: a token, the whole NS instance
// list, the delete, then with Wait the wait (until the operation is gone with the instance).
func (c *CLIPattern) DeleteInstances(ctx context.Context, names []string) error {
	instances := make([]gitops.NsInstance, len(names))
	for i, name := range names {
		instances[i].Name = name
	}
	return c.each(ctx, instances, "deleting", func(cmd *cliCommand, ns gitops.NsInstance) error {
		id, err := c.lookUpInstance(ctx, cmd, ns.Name, 1)
		if err != nil {
			return err
		}
		var started struct {
			ID string `json:"_id"` // the NBI's DELETE answer, unlike its other operation answers
		}
		if err := cmd.send(ctx, http.MethodDelete, nsInstancesPath+"/"+url.PathEscape(id), &started); err != nil {
			return err
		}
		return c.wait(ctx, cmd, started.ID, true)
	})
}

// lookUpInstance lists every NS instance lists times, as the CLI does to find one by name.
func (c *CLIPattern) lookUpInstance(ctx context.Context, cmd *cliCommand, name string, lists int) (string, error) {
	for range lists {
		if err := cmd.send(ctx, http.MethodGet, nsInstancesPath, nil); err != nil {
			return "", err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.ids[name]
	if !ok {
		return "", fmt.Errorf("NS instance %s was not created by this CLI pattern", name)
	}
	return id, nil
}

func (c *CLIPattern) setID(name, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]string{}
	}
	c.ids[name] = id
}

// each runs one command per instance, Parallelism at a time, and returns the first failure.
func (c *CLIPattern) each(ctx context.Context, instances []gitops.NsInstance, verb string, run func(*cliCommand, gitops.NsInstance) error) error {
	group, groupCtx := errgroup.WithContext(ctx)
	group.SetLimit(max(c.Parallelism, 1))
	for _, ns := range instances {
		group.Go(func() error {
			if err := c.command(groupCtx, func(cmd *cliCommand) error { return run(cmd, ns) }); err != nil {
				return fmt.Errorf("%s NS instance %s: %w", verb, ns.Name, err)
			}
			return nil
		})
	}
	return group.Wait()
}

// command runs one CLI command: a new process has new connections and logs in first.
func (c *CLIPattern) command(ctx context.Context, run func(*cliCommand) error) error {
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	cmd := &cliCommand{base: c.NBI, http: &http.Client{Transport: transport}, pollInterval: c.PollInterval}
	var session struct {
		ID string `json:"id"`
	}
	login := map[string]string{"username": c.Credentials.Username, "password": c.Credentials.Password, "project_id": c.Credentials.Project}
	if err := cmd.sendJSON(ctx, http.MethodPost, tokensPath, login, &session); err != nil {
		return fmt.Errorf("logging in: %w", err)
	}
	cmd.token = session.ID
	return run(cmd)
}

// cliCommand is one command's session.
type cliCommand struct {
	base         string
	http         *http.Client
	token        string
	pollInterval time.Duration
}

// errGone is a 404 answer, which ends the wait for a delete.
var errGone = errors.New("not found")

// wait is --wait: it polls an operation until it has finished (for a delete, until it is
// gone); without Wait the command returns at once.
func (c *CLIPattern) wait(ctx context.Context, cmd *cliCommand, operationID string, deleting bool) error {
	if !c.Wait {
		return nil
	}
	return cmd.poll(ctx, operationID, deleting)
}

// poll reads an operation at once, then after each pause, until it has finished; for a
// delete, until it is gone.
func (cmd *cliCommand) poll(ctx context.Context, operationID string, deleting bool) error {
	for {
		var op osm.Operation
		err := cmd.send(ctx, http.MethodGet, operationPath+url.PathEscape(operationID), &op)
		switch {
		case deleting && errors.Is(err, errGone):
			return nil
		case err != nil:
			return err
		case op.Done() && !op.Succeeded():
			return fmt.Errorf("operation %s ended %s", operationID, op.OperationState)
		case op.Done():
			return nil
		}
		select {
		case <-time.After(cmd.pollInterval):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// upload sends a package tarball with the headers the NBI checks.
func (cmd *cliCommand) upload(ctx context.Context, path string, pkg gitops.Package) error {
	header := http.Header{}
	header.Set("Content-Type", "application/gzip")
	header.Set("Content-Filename", pkg.Name+".tar.gz")
	header.Set("Content-File-MD5", pkg.MD5)
	return cmd.do(ctx, http.MethodPost, path, pkg.Tarball, header, nil)
}

// sendJSON sends a JSON body.
func (cmd *cliCommand) sendJSON(ctx context.Context, method, path string, body, out any) error {
	encoded, err := json.Marshal(body)
	if err != nil {
		return err
	}
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	return cmd.do(ctx, method, path, encoded, header, out)
}

// send sends a request without a body.
func (cmd *cliCommand) send(ctx context.Context, method, path string, out any) error {
	return cmd.do(ctx, method, path, nil, nil, out)
}

// do sends one request and decodes the JSON answer into out; with a nil out the answer is read
// and discarded. The path never holds the token, so errors may show it.
func (cmd *cliCommand) do(ctx context.Context, method, path string, body []byte, header http.Header, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, cmd.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	maps.Copy(req.Header, header)
	req.Header.Set("Accept", "application/json")
	if cmd.token != "" {
		req.Header.Set("Authorization", "Bearer "+cmd.token)
	}
	resp, err := cmd.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s %s: %w", method, path, errGone)
	}
	if resp.StatusCode/100 != 2 {
		detail, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, detail)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// findID returns the id of the item whose name is name, or "".
func findID[T any](items []T, name string, nameAndID func(T) (string, string)) string {
	for _, item := range items {
		if itemName, id := nameAndID(item); itemName == name {
			return id
		}
	}
	return ""
}
