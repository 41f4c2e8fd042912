package nbisim

import (
	"encoding/json"

	"github.com/osmops/osmops/internal/nbisim/python"
)

// The record shapes below follow samples/ns_instance_knf.json,
// vnf_instances_knf.json and nslcmop_list.json: the members in the NBI's
// order, null where the NBI writes None.

type nsrDoc struct {
	Name                string  `json:"name"`
	NameRef             string  `json:"name-ref"`
	ShortName           string  `json:"short-name"`
	AdminStatus         string  `json:"admin-status"`
	NsState             string  `json:"nsState"`
	CurrentOperation    string  `json:"currentOperation"`
	CurrentOperationID  *string `json:"currentOperationID"`
	ErrorDescription    *string `json:"errorDescription"`
	ErrorDetail         *string `json:"errorDetail"`
	DeploymentStatus    any     `json:"deploymentStatus"`
	ConfigurationStatus any     `json:"configurationStatus"`
	VcaStatus           any     `json:"vcaStatus"`
	// Nsd renders as null; spliceNSD puts the NSD in its place.
	Nsd                   json.RawMessage `json:"nsd"`
	Datacenter            string          `json:"datacenter"`
	ResourceOrchestrator  string          `json:"resource-orchestrator"`
	Description           any             `json:"description"`
	ConstituentVnfrRef    []string        `json:"constituent-vnfr-ref"`
	OperationalStatus     string          `json:"operational-status"`
	ConfigStatus          string          `json:"config-status"`
	DetailedStatus        string          `json:"detailed-status"`
	OrchestrationProgress struct{}        `json:"orchestration-progress"`
	CreateTime            epochTime       `json:"create-time"`
	NsdNameRef            string          `json:"nsd-name-ref"`
	OperationalEvents     []any           `json:"operational-events"`
	NsdRef                string          `json:"nsd-ref"`
	NsdID                 string          `json:"nsd-id"`
	VnfdID                []string        `json:"vnfd-id"`
	InstantiateParams     *python.Dict    `json:"instantiate_params"`
	AdditionalParamsForNs *python.Dict    `json:"additionalParamsForNs"`
	NsInstanceConfigRef   string          `json:"ns-instance-config-ref"`
	ID                    string          `json:"id"`
	UID                   string          `json:"_id"`
	SSHAuthorizedKey      any             `json:"ssh-authorized-key"`
	Flavor                []any           `json:"flavor"`
	Image                 []any           `json:"image"`
	AffinityGroups        []any           `json:"affinity-or-anti-affinity-group"`
	SharedVolumes         []any           `json:"shared-volumes"`
	Vnffgd                []any           `json:"vnffgd"`
	Revision              int             `json:"revision"`
	Vld                   []any           `json:"vld,omitempty"`
	Admin                 nsrAdminDoc     `json:"_admin"`
}

type nsrAdminDoc struct {
	adminDoc
	NsState  string       `json:"nsState"`
	Deployed *deployedDoc `json:"deployed,omitempty"`
	// LCMAdmin is absent until LCM first writes the NS's status (NS
	// records only).
	*LCMAdmin
}

// LCMAdmin is what LCM's _write_ns_status adds to an NS record's _admin:
// the current operation's id (twice) and type, null when IDLE.
type LCMAdmin struct {
	Nslcmop          *string `json:"nslcmop"`
	CurrentOperation *string `json:"current-operation"`
	OperationType    *string `json:"operation-type"`
}

// deployedDoc is what LCM records of a deployment in the NS record.
type deployedDoc struct {
	K8s []k8sDeploymentDoc `json:"K8s"`
	VCA []any              `json:"VCA"`
}

type k8sDeploymentDoc struct {
	KduInstance       string `json:"kdu-instance"`
	K8sClusterUUID    string `json:"k8scluster-uuid"`
	KduDeploymentName string `json:"kdu-deployment-name"`
	K8sClusterType    string `json:"k8scluster-type"`
	MemberVnfIndex    string `json:"member-vnf-index"`
	KduName           string `json:"kdu-name"`
	KduModel          string `json:"kdu-model"`
	Namespace         string `json:"namespace"`
	Status            string `json:"status"`
	// Operation and DetailedStatus are what LCM's Helm connector writes after each install,
	// upgrade and rollback (write_app_status_to_db): its operation, and str() of what "helm
	// status --output yaml" printed, the manifest parsed: a Python repr, with every value of
	// the release (those taken from Secrets too).
	Operation      string `json:"operation,omitempty"`
	DetailedStatus string `json:"detailed-status,omitempty"`
}

type vnfrDoc struct {
	ID                     string       `json:"id"`
	UID                    string       `json:"_id"`
	NsrIDRef               string       `json:"nsr-id-ref"`
	MemberVnfIndexRef      string       `json:"member-vnf-index-ref"`
	AdditionalParamsForVnf *python.Dict `json:"additionalParamsForVnf"`
	CreatedTime            epochTime    `json:"created-time"`
	VnfdRef                string       `json:"vnfd-ref"`
	VnfdID                 string       `json:"vnfd-id"`
	VimAccountID           *string      `json:"vim-account-id"`
	VcaID                  any          `json:"vca-id"`
	Vdur                   []any        `json:"vdur"`
	ConnectionPoint        []any        `json:"connection-point"`
	IPAddress              any          `json:"ip-address"`
	Revision               int          `json:"revision"`
	K8sCluster             *python.Dict `json:"k8s-cluster,omitempty"`
	Kdur                   []*kdurDoc   `json:"kdur,omitempty"`
	Admin                  nsrAdminDoc  `json:"_admin"`
}

type kdurDoc struct {
	// AdditionalParams is the JSON string of the KDU's params, or null.
	AdditionalParams  *string      `json:"additionalParams"`
	K8sNamespace      string       `json:"k8s-namespace"`
	KduDeploymentName string       `json:"kdu-deployment-name"`
	KduName           string       `json:"kdu-name"`
	IPAddress         any          `json:"ip-address"`
	K8sCluster        kdurCluster  `json:"k8s-cluster"`
	HelmVersion       string       `json:"helm-version,omitempty"`
	HelmChart         string       `json:"helm-chart,omitempty"`
	JujuBundle        string       `json:"juju-bundle,omitempty"`
	KduInstance       string       `json:"kdu-instance,omitempty"`
	Status            string       `json:"status,omitempty"`
	params            *python.Dict // the params as an object, as LCM reads them (parse_yaml_strings)
	release           *helmRelease // the KDU's Helm release while it is deployed, else nil
}

type kdurCluster struct {
	ID string `json:"id,omitempty"`
}

type operationDoc struct {
	ID                    string       `json:"id"`
	UID                   string       `json:"_id"`
	OperationState        string       `json:"operationState"`
	QueuePosition         *int         `json:"queuePosition"`
	Stage                 *string      `json:"stage"`
	ErrorMessage          *string      `json:"errorMessage"`
	DetailedStatus        any          `json:"detailedStatus"`
	StatusEnteredTime     epochTime    `json:"statusEnteredTime"`
	NsInstanceID          string       `json:"nsInstanceId"`
	LcmOperationType      string       `json:"lcmOperationType"`
	StartTime             epochTime    `json:"startTime"`
	IsAutomaticInvocation bool         `json:"isAutomaticInvocation"`
	OperationParams       *python.Dict `json:"operationParams"`
	IsCancelPending       bool         `json:"isCancelPending"`
	Links                 opLinks      `json:"links"`
	Admin                 adminDoc     `json:"_admin"`
	// LCMDetailedStatus is the "detailed-status" LCM adds while it works:
	// a string, or the revision of the release a KDU upgrade or rollback
	// made (the number K8sHelmBaseConnector.upgrade and rollback return).
	LCMDetailedStatus any `json:"detailed-status,omitempty"`
}

type opLinks struct {
	Self       string `json:"self"`
	NsInstance string `json:"nsInstance"`
}
