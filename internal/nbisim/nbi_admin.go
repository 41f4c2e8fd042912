package nbisim

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// Version and VersionDate are what GET /osm/version answers.
const (
	Version     = "19.0.0+sim"
	VersionDate = "2025-12-01"
)

// getVersion serves GET /osm/version, which needs no token in the NBI either.
func (s *Server) getVersion(*call) (response, *nbiError) {
	return jsonResponse(http.StatusOK, python.NewDict("version", Version, "date", VersionDate)), nil
}

type vimRecord struct {
	id, name string
	content  *python.Dict
	clusters []*clusterRecord
	doc      doc
}

type clusterRecord struct {
	id, name, vimID string
	version         string
	// nets maps the cluster's network names to VIM networks.
	nets    *python.Dict
	content *python.Dict
	doc     doc
}

// vimAdminDoc is the _admin of a VIM account or K8s cluster; the simulator
// brings them up at once (OSM's RO takes a few seconds).
type vimAdminDoc struct {
	adminDoc
	OperationalState string        `json:"operationalState"`
	Operations       []adminOpDoc  `json:"operations"`
	CurrentOperation any           `json:"current_operation"`
	HelmChartV3      *helmAdminDoc `json:"helm-chart-v3,omitempty"`
}

type adminOpDoc struct {
	LcmOperationType  string    `json:"lcmOperationType"`
	OperationState    string    `json:"operationState"`
	StartTime         epochTime `json:"startTime"`
	StatusEnteredTime epochTime `json:"statusEnteredTime"`
	DetailedStatus    string    `json:"detailed-status"`
	OperationParams   any       `json:"operationParams"`
}

type helmAdminDoc struct {
	ID      string `json:"id"`
	Created bool   `json:"created"`
}

func (s *Server) enabledAdmin(now time.Time) vimAdminDoc {
	return vimAdminDoc{
		adminDoc:         s.newAdmin(now),
		OperationalState: "ENABLED",
		Operations: []adminOpDoc{{
			LcmOperationType: "create", OperationState: "COMPLETED",
			StartTime: epoch(now), StatusEnteredTime: epoch(now), DetailedStatus: "Done",
		}},
	}
}

// opaqueSecret stands for a stored password: the NBI keeps them encrypted,
// and the simulator never keeps or shows the real one.
func opaqueSecret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// addVIM stores a VIM account from the fields of its creation request.
func (s *Server) addVIM(content *python.Dict, now time.Time) *vimRecord {
	id := uuid.NewString()
	content = content.Clone()
	content.Set("vim_password", opaqueSecret())
	content.Set("_admin", s.enabledAdmin(now))
	content.Set("_id", id)
	content.Set("schema_version", "1.11")
	vim := &vimRecord{id: id, name: content.Str("name"), content: content, doc: renderDoc(content)}
	s.db.vims.add(id, vim)
	s.db.vimsByName[vim.name] = vim
	return vim
}

// addCluster stores a K8s cluster from the fields of its creation request;
// its credentials (a kubeconfig) are not kept.
func (s *Server) addCluster(vim *vimRecord, content *python.Dict, now time.Time) *clusterRecord {
	id := uuid.NewString()
	content = content.Clone()
	content.Del("credentials")
	admin := s.enabledAdmin(now)
	admin.HelmChartV3 = &helmAdminDoc{ID: uuid.NewString(), Created: true}
	content.Set("_admin", admin)
	content.Set("_id", id)
	content.Set("schema_version", "1.11")
	nets := content.Obj("nets")
	if nets == nil {
		nets = &python.Dict{}
	}
	version, _ := content.Get("k8s_version")
	cluster := &clusterRecord{
		id: id, name: content.Str("name"), vimID: vim.id, version: scalarText(version),
		nets: nets, content: content, doc: renderDoc(content),
	}
	s.db.clusters.add(id, cluster)
	vim.clusters = append(vim.clusters, cluster)
	return cluster
}

// seedVIM creates a configured VIM account and, unless told otherwise, its
// K8s cluster.
func (s *Server) seedVIM(account VIMAccount, now time.Time) {
	vimType := firstNonEmpty(account.Type, DefaultVIMType)
	vim := s.addVIM(python.NewDict(
		"name", account.Name, "vim_type", vimType, "vim_url", "http://"+account.Name+".vim.invalid:5000/v3",
		"vim_user", "osm", "vim_password", "", "vim_tenant_name", "osm", "description", "VIM account seeded by the NBI simulator",
	), now)
	if account.NoK8sCluster {
		return
	}
	s.addCluster(vim, python.NewDict(
		"name", account.Name+"-k8s", "vim_account", vim.id, "k8s_version", "1.29",
		"nets", python.NewDict("net1", nil), "namespace", "kube-system", "cni", []any{},
		"description", "K8s cluster seeded by the NBI simulator",
	), now)
}

func (s *Server) listVIMAccounts(c *call) (response, *nbiError) {
	byName := func(name string) []*vimRecord {
		if vim := s.db.vimsByName[name]; vim != nil {
			return []*vimRecord{vim}
		}
		return nil
	}
	return listRecords(c, s.db.vims.all, index[*vimRecord]{"name", byName}), nil
}

func (s *Server) getVIMAccount(c *call) (response, *nbiError) {
	vim, found := s.db.vims.get(c.param(0))
	if !found {
		return response{}, s.notFound(c.param(0))
	}
	return docResponse(vim.doc), nil
}

// newVIMAccount serves POST /admin/v1/vim_accounts: 202 {"_id","id","op_id"}.
func (s *Server) newVIMAccount(c *call) (response, *nbiError) {
	input, err := c.jsonObject()
	if err != nil {
		return response{}, err
	}
	if problem := vimAccountNewSchema.validate(input); problem != nil {
		return response{}, errorf(http.StatusUnprocessableEntity, "%s", problem.formatError())
	}
	if s.db.vimsByName[input.Str("name")] != nil {
		return response{}, errorf(http.StatusConflict, "name '%s' already exists for vim_accounts", input.Str("name"))
	}
	vim := s.addVIM(input, c.now)
	return createdAccepted(vim.id, "/osm/admin/v1/vim_accounts/"), nil
}

// createdAccepted is the NBI's answer to creating an item that its RO or
// LCM then sets up: 202 with the id and the id of that operation.
func createdAccepted(id, location string) response {
	answer := jsonResponse(http.StatusAccepted, python.NewDict("_id", id, "id", id, "op_id", id+":0"))
	return answer.withHeader("Location", location+id)
}

func (s *Server) listK8sClusters(c *call) (response, *nbiError) {
	return listRecords(c, s.db.clusters.all), nil
}

func (s *Server) getK8sCluster(c *call) (response, *nbiError) {
	cluster, found := s.db.clusters.get(c.param(0))
	if !found {
		return response{}, s.notFound(c.param(0))
	}
	return docResponse(cluster.doc), nil
}

// newK8sCluster serves POST /admin/v1/k8sclusters; vim_account links the
// cluster to a VIM account.
func (s *Server) newK8sCluster(c *call) (response, *nbiError) {
	input, err := c.jsonObject()
	if err != nil {
		return response{}, err
	}
	if problem := k8sClusterNewSchema.validate(input); problem != nil {
		return response{}, errorf(http.StatusUnprocessableEntity, "%s", problem.formatError())
	}
	for _, cluster := range s.db.clusters.all() {
		if cluster.name == input.Str("name") {
			return response{}, errorf(http.StatusConflict, "name '%s' already exists for k8sclusters", cluster.name)
		}
	}
	vim, found := s.db.vims.get(input.Str("vim_account"))
	if !found {
		return response{}, s.notFound(input.Str("vim_account"))
	}
	cluster := s.addCluster(vim, input, c.now)
	return createdAccepted(cluster.id, "/osm/admin/v1/k8sclusters/"), nil
}

// scalarText renders a scalar as it is written in a query string.
func scalarText(value any) string {
	switch v := value.(type) {
	case string:
		return v
	case nil:
		return "None"
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	return fmt.Sprint(value)
}
