package osm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/osmops/osmops/internal/pyyaml"
)

// LooseString is a JSON field that OSM fills loosely: a string, null, a
// number or even an object (errorDetail, detailed-status). A string keeps its
// text, null is "", anything else is its compact JSON text.
type LooseString string

// UnmarshalJSON accepts any JSON value.
func (s *LooseString) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*s = ""
	case len(data) > 0 && data[0] == '"':
		var text string
		if err := json.Unmarshal(data, &text); err != nil {
			return err
		}
		*s = LooseString(text)
	default:
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			return err
		}
		*s = LooseString(compact.String())
	}
	return nil
}

// Number is a JSON number that OSM may also send as a string ("0.25") or
// null (0). It may be NaN or infinite (a string "NaN", a number beyond float64's range): read
// it through answerTime, answerDuration or answerCount.
type Number float64

// UnmarshalJSON accepts a number, a string holding one, or null.
func (n *Number) UnmarshalJSON(data []byte) error {
	text := strings.Trim(string(bytes.TrimSpace(data)), `"`)
	if text == "null" || text == "" {
		*n = 0
		return nil
	}
	value, err := strconv.ParseFloat(text, 64)
	// Beyond float64's range (1e400) is a number still, infinite: the reader drops it, rather
	// than the whole answer.
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		// The value is not quoted: an NBI that echoes a request could have put a secret in it.
		// encoding/json adds the field's name to an UnmarshalTypeError.
		return &json.UnmarshalTypeError{Value: "non-numeric value", Type: reflect.TypeFor[Number]()}
	}
	*n = Number(value)
	return nil
}

// OperationalStatusTerminated is the operational-status LCM writes on an NS instance it
// terminated (a new one says "init").
const OperationalStatusTerminated = "terminated"

// NS instance states (nsState).
const (
	NSStateNotInstantiated = "NOT_INSTANTIATED"
	NSStateBuilding        = "BUILDING"
	NSStateReady           = "READY"
	NSStateDegraded        = "DEGRADED"
	NSStateBroken          = "BROKEN"
	NSStateTerminating     = "TERMINATING"
)

// CurrentOperationIdle is an NS instance's currentOperation when no operation runs on it.
const CurrentOperationIdle = "IDLE"

// LCM operation types (lcmOperationType).
const (
	OperationTypeInstantiate = "instantiate"
	OperationTypeAction      = "action"
	OperationTypeTerminate   = "terminate"
	OperationTypeUpdate      = "update"
)

// LCM operation states (operationState).
const (
	OperationProcessing         = "PROCESSING"
	OperationCompleted          = "COMPLETED"
	OperationPartiallyCompleted = "PARTIALLY_COMPLETED"
	OperationFailedTemp         = "FAILED_TEMP"
	OperationFailed             = "FAILED"
	OperationRollingBack        = "ROLLING_BACK"
	OperationRolledBack         = "ROLLED_BACK"
)

// Version is the NBI's version answer.
type Version struct {
	Version string `json:"version"`
	Date    string `json:"date"`
}

// DefaultQuota is how many records of a kind a project may hold when its quotas do not name
// the kind (OSM's base_topic.py, BaseTopic.default_quota): beyond, the NBI refuses a create
// with 422.
const DefaultQuota = 500

// OSM's names of the quotas of what the operator creates (validation.py, topics_with_quota).
const (
	QuotaVNFDs       = "vnfds"
	QuotaNSDs        = "nsds"
	QuotaNSInstances = "ns_instances"
)

// Project is an OSM project record.
type Project struct {
	ID   string `json:"_id"`
	Name string `json:"name"`
	// Quotas bound the records of a kind the project holds, by quota name; an administrator
	// sets them (absent: DefaultQuota).
	Quotas map[string]*Number `json:"quotas"`
}

// Quota returns the project's quota of name, within [0, MaxInt32] (answerCount): a larger one
// is no bound in practice, a negative one refuses every create as OSM does, and so does NaN,
// which OSM's own validation never lets an administrator set.
func (p *Project) Quota(name string) int {
	quota := p.Quotas[name]
	if quota == nil {
		return DefaultQuota
	}
	return answerCount(*quota, math.MaxInt32)
}

// VIMAccount is a VIM account record.
type VIMAccount struct {
	// ID is OSM's id, which NS instances refer to.
	ID          string          `json:"_id"`
	Name        string          `json:"name"`
	VIMType     string          `json:"vim_type"`
	Description LooseString     `json:"description"`
	Admin       VIMAccountAdmin `json:"_admin"`
}

// VIMAccountAdmin is the _admin part of a VIM account.
type VIMAccountAdmin struct {
	OperationalState string `json:"operationalState"`
}

// checkIDs: the _id is the vimAccountId of the creates (answerID).
func (v *VIMAccount) checkIDs() error { return checkAnswerFields(idField("_id", v.ID)) }

// UsageInUse is the usageState of a descriptor that NS instances use.
const UsageInUse = "IN_USE"

// DescriptorAdmin is the _admin part of a descriptor record.
type DescriptorAdmin struct {
	OnboardingState  string `json:"onboardingState"`
	OperationalState string `json:"operationalState"`
	UsageState       string `json:"usageState"`
	Revision         Number `json:"revision"`
	Created          Number `json:"created"`
	Modified         Number `json:"modified"`
	// UserDefinedData is what clients wrote with SetPackageUserData.
	UserDefinedData map[string]LooseString `json:"userDefinedData"`
}

// maxPackageRevision bounds a package's revision, which counts its uploads: far beyond any,
// and the next revision is still an int.
const maxPackageRevision = math.MaxInt32

// UnmarshalJSON reads the _admin of a descriptor, its revision within [0, maxPackageRevision]
// (answerCount).
func (a *DescriptorAdmin) UnmarshalJSON(data []byte) error {
	type plain DescriptorAdmin
	if err := json.Unmarshal(data, (*plain)(a)); err != nil {
		return err
	}
	a.Revision = Number(answerCount(a.Revision, maxPackageRevision))
	return nil
}

// NSDescriptor is an NSD record.
type NSDescriptor struct {
	// ID is OSM's id (`_id`), which NS instances refer to.
	ID string `json:"_id"`
	// DescriptorID is the descriptor's own `id`, unique per project.
	DescriptorID string `json:"id"`
	Name         string `json:"name"`
	// Version is loose: a descriptor's unquoted `version: 1.0` is a number.
	Version LooseString `json:"version"`
	// VnfdIDs are the `id`s of the VNF descriptors the NSD uses.
	VnfdIDs            []string              `json:"vnfd-id"`
	DeploymentFlavours []NSDeploymentFlavour `json:"df"`
	Admin              DescriptorAdmin       `json:"_admin"`
}

// NSDeploymentFlavour is an entry of an NSD's df list.
type NSDeploymentFlavour struct {
	ID          string         `json:"id"`
	VnfProfiles []NSVnfProfile `json:"vnf-profile"`
}

// NSVnfProfile is an entry of an NSD's df[].vnf-profile list; its ID is the
// member-vnf-index of the VNF in NS instances.
type NSVnfProfile struct {
	ID     string `json:"id"`
	VnfdID string `json:"vnfd-id"`
}

// checkIDs: the _id is the nsdId of the creates and the package's id in status (answerID). The
// descriptor's own ids (id, vnfd-id, df[].id, vnf-profile[].id) are not OSM's: the package's
// author names them in Git, and they are only compared with Git's.
func (d *NSDescriptor) checkIDs() error { return checkAnswerFields(idField("_id", d.ID)) }

// VNFDescriptor is a VNFD record.
type VNFDescriptor struct {
	// ID is OSM's id (`_id`).
	ID string `json:"_id"`
	// DescriptorID is the descriptor's own `id`, unique per project.
	DescriptorID string      `json:"id"`
	ProductName  string      `json:"product-name"`
	Version      LooseString `json:"version"`
	// SoftwareVersion is "" when the descriptor has none (OSM reads "1.0" then).
	SoftwareVersion LooseString     `json:"software-version"`
	KDUs            []DescriptorKDU `json:"kdu"`
	Admin           DescriptorAdmin `json:"_admin"`
}

// DescriptorKDU is an entry of a VNFD's kdu list.
type DescriptorKDU struct {
	Name       string `json:"name"`
	HelmChart  string `json:"helm-chart"`
	JujuBundle string `json:"juju-bundle"`
}

// checkIDs: the _id is the path of the package's updates and its id in status (answerID); the
// descriptor's own id is its author's, as an NSD's.
func (d *VNFDescriptor) checkIDs() error { return checkAnswerFields(idField("_id", d.ID)) }

// NSInstance is an NS instance record.
type NSInstance struct {
	ID                 string      `json:"_id"`
	Name               string      `json:"name"`
	Description        LooseString `json:"description"`
	NSState            string      `json:"nsState"`
	CurrentOperation   LooseString `json:"currentOperation"`
	CurrentOperationID LooseString `json:"currentOperationID"`
	ErrorDescription   LooseString `json:"errorDescription"`
	ErrorDetail        LooseString `json:"errorDetail"`
	DetailedStatus     LooseString `json:"detailed-status"`
	OperationalStatus  LooseString `json:"operational-status"`
	ConfigStatus       LooseString `json:"config-status"`
	// NsdID is OSM's id of the NSD; NsdRef is the NSD's own id.
	NsdID             string              `json:"nsd-id"`
	NsdRef            string              `json:"nsd-ref"`
	InstantiateParams NSInstantiateParams `json:"instantiate_params"`
	// AdditionalParamsForNs are the NS-level parameters of the create request, as the NBI keeps
	// them: a value that was an object or a list is a "!!yaml ..." string.
	AdditionalParamsForNs map[string]LooseString `json:"additionalParamsForNs"`
	// VNFInstanceIDs are the ids of the NS instance's VNF records.
	VNFInstanceIDs []string        `json:"constituent-vnfr-ref"`
	CreateTime     Number          `json:"create-time"`
	Admin          NSInstanceAdmin `json:"_admin"`
}

// NSInstantiateParams are the parameters an NS instance was created with.
// OSM keeps the KDU values in the VNF records (VNFInstance), not here.
type NSInstantiateParams struct {
	NSName                 string      `json:"nsName"`
	NsdID                  string      `json:"nsdId"`
	VIMAccountID           string      `json:"vimAccountId"`
	NSDescription          LooseString `json:"nsDescription"`
	AdditionalParamsForVnf []VnfParams `json:"additionalParamsForVnf"`
	K8sNamespace           string      `json:"k8s-namespace"`
	TimeoutNsDeploy        Number      `json:"timeout_ns_deploy"`
}

// NSInstanceAdmin is the _admin part of an NS instance record.
type NSInstanceAdmin struct {
	NSState  string             `json:"nsState"`
	Deployed NSInstanceDeployed `json:"deployed"`
	// ProjectsRead are the projects that see the instance; the first is the one that created
	// it, whose id is the KDUs' namespace when the request named none.
	ProjectsRead []string `json:"projects_read"`
}

// NSInstanceDeployed is what OSM deployed for an NS instance.
type NSInstanceDeployed struct {
	K8s []DeployedKDU `json:"K8s"`
}

// checkIDs checks the ids and the states of an NS record the operator reads (answerID): its _id
// (status.inventory[].id, the path of later requests), the VIM account it was created on, the
// projects that read it (the first is a KDU's default namespace), its nsState. The ids it keeps
// unread (nsd-id, constituent-vnfr-ref, currentOperationID, k8scluster-uuid) are not checked.
func (ns *NSInstance) checkIDs() error {
	fields := make([]answerField, 0, 4+len(ns.Admin.ProjectsRead))
	fields = append(fields,
		idField("_id", ns.ID),
		idField("instantiate_params.vimAccountId", ns.InstantiateParams.VIMAccountID),
		enumField("nsState", ns.NSState),
		enumField("_admin.nsState", ns.Admin.NSState))
	for i, project := range ns.Admin.ProjectsRead {
		fields = append(fields, idField(fmt.Sprintf("_admin.projects_read[%d]", i), project))
	}
	return checkAnswerFields(fields...)
}

// DeployedKDU is an entry of an NS instance's _admin.deployed.K8s list.
type DeployedKDU struct {
	KDUInstance    string      `json:"kdu-instance"`
	KDUName        string      `json:"kdu-name"`
	MemberVnfIndex string      `json:"member-vnf-index"`
	KDUModel       string      `json:"kdu-model"`
	Namespace      string      `json:"namespace"`
	K8sClusterID   string      `json:"k8scluster-uuid"`
	Status         LooseString `json:"status"`
	// Charts are the chart labels of the release's objects, as OSM reports them after each
	// install, upgrade or rollback.
	Charts ReleaseCharts `json:"detailed-status"`
}

// ReleaseCharts are the distinct "helm.sh/chart" labels (<chart>-<version>, the label Helm's
// chart scaffold and most charts put on every object) of a release's manifest, read from the
// detailed-status LCM writes in _admin.deployed.K8s[]: the Python repr of "helm status" with
// the manifest parsed. It is the only place where OSM reports the version a KDU runs when its
// chart named none. Nothing else of the detailed-status is kept: it holds every value of the
// release, those taken from Secrets too.
type ReleaseCharts []string

// maxReleaseCharts bounds the labels kept of one release (a chart and its subcharts).
const maxReleaseCharts = 16

// releaseChartLabel is how a chart label reads in the repr: 'helm.sh/chart': 'openldap-1.2.7'.
var releaseChartLabel = regexp.MustCompile(`'helm\.sh/chart': '([A-Za-z0-9._+-]{1,128})'`)

// UnmarshalJSON keeps the chart labels of a detailed-status given as a string; any other value
// holds none.
func (c *ReleaseCharts) UnmarshalJSON(data []byte) error {
	*c = nil
	var text string
	if json.Unmarshal(data, &text) != nil {
		return nil
	}
	for _, match := range releaseChartLabel.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(*c, match[1]) && len(*c) < maxReleaseCharts {
			*c = append(*c, match[1])
		}
	}
	return nil
}

// Version is the version of chart (a chart's name, without its repository) that the labels
// name, "" unless exactly one.
func (c ReleaseCharts) Version(chart string) string {
	version := ""
	for _, label := range c {
		if v, found := strings.CutPrefix(label, chart+"-"); found && v != "" && (v[0] >= '0' && v[0] <= '9') {
			if version != "" && version != v {
				return ""
			}
			version = v
		}
	}
	return version
}

// VNFInstance is a VNF record: where OSM keeps a KNF's live KDU values.
type VNFInstance struct {
	ID             string `json:"_id"`
	NSInstanceID   string `json:"nsr-id-ref"`
	MemberVnfIndex string `json:"member-vnf-index-ref"`
	VnfdRef        string `json:"vnfd-ref"`
	VnfdID         string `json:"vnfd-id"`
	VIMAccountID   string `json:"vim-account-id"`
	// AdditionalParamsForVnf are the VNF-level parameters of the create request, as the NBI
	// keeps them (see NSInstance.AdditionalParamsForNs).
	AdditionalParamsForVnf map[string]LooseString `json:"additionalParamsForVnf"`
	KDURecords             []KDURecord            `json:"kdur"`
	// Revision is the revision of the VNF package the VNF runs: the package's _admin.revision
	// when the VNF was made, moved by a completed CHANGE_VNFPKG update (LCM's ns.py, update).
	// The NBI and LCM read a record without one as revision 1.
	Revision Number `json:"revision"`
}

// UnmarshalJSON reads a VNF record, its revision within [0, maxPackageRevision] (answerCount).
func (v *VNFInstance) UnmarshalJSON(data []byte) error {
	type plain VNFInstance
	if err := json.Unmarshal(data, (*plain)(v)); err != nil {
		return err
	}
	v.Revision = Number(answerCount(v.Revision, maxPackageRevision))
	return nil
}

// checkIDs checks the ids of a VNF record (answerID): its _id (the VNF of a CHANGE_VNFPKG), its
// NS instance's, its VNF package's (vnfd-id) and its VIM account's. The descriptor's own names
// (member-vnf-index-ref, vnfd-ref) are its author's, compared with Git's.
func (v *VNFInstance) checkIDs() error {
	return checkAnswerFields(idField("_id", v.ID), idField("nsr-id-ref", v.NSInstanceID),
		idField("vnfd-id", v.VnfdID), idField("vim-account-id", v.VIMAccountID))
}

// KDURecord is an entry of a VNF record's kdur list.
type KDURecord struct {
	KDUName   string `json:"kdu-name"`
	HelmChart string `json:"helm-chart"`
	// AdditionalParams holds the KDU's values as OSM stores them: a
	// JSON-encoded string (an object is tolerated too). See Params.
	AdditionalParams LooseString     `json:"additionalParams"`
	K8sNamespace     string          `json:"k8s-namespace"`
	K8sCluster       KDURecordTarget `json:"k8s-cluster"`
	Status           LooseString     `json:"status"`
}

// KDURecordTarget names the Kubernetes cluster a KDU runs on.
type KDURecordTarget struct {
	ID string `json:"id"`
}

// yamlValuePrefix marks a value that the NBI turned from a map or a list into YAML text
// (instance_topics.py, _format_additional_params); LCM reads it back before Helm gets it
// (data_utils/dict_utils.py, parse_yaml_strings).
const yamlValuePrefix = "!!yaml "

// Params decodes AdditionalParams as LCM gives them to Helm: a "!!yaml" value is the map or
// list its YAML text holds, read with PyYAML's rules as LCM does (the string 5e3 stays a
// string). No values give a nil map.
func (k KDURecord) Params() (map[string]any, error) {
	if strings.TrimSpace(string(k.AdditionalParams)) == "" {
		return nil, nil
	}
	var params map[string]any
	if err := json.Unmarshal([]byte(k.AdditionalParams), &params); err != nil {
		return nil, fmt.Errorf("additionalParams of KDU %q are not a JSON object: %w", k.KDUName, err)
	}
	for key, value := range params {
		text, isString := value.(string)
		if !isString || !strings.HasPrefix(text, yamlValuePrefix) {
			continue
		}
		decoded, err := pyyaml.LoadJSON([]byte(strings.TrimPrefix(text, yamlValuePrefix)))
		if err != nil {
			return nil, fmt.Errorf("additionalParams of KDU %q: value %q is not YAML: %w", k.KDUName, key, err)
		}
		params[key] = decoded
	}
	return params, nil
}

// Operation is an NS LCM operation record (nslcmop).
type Operation struct {
	ID               string `json:"_id"`
	OperationState   string `json:"operationState"`
	LCMOperationType string `json:"lcmOperationType"`
	NSInstanceID     string `json:"nsInstanceId"`
	// StartTime and StatusEnteredTime are epoch seconds; see StartedAt and StatusEnteredAt.
	StartTime         Number      `json:"startTime"`
	StatusEnteredTime Number      `json:"statusEnteredTime"`
	ErrorMessage      LooseString `json:"errorMessage"`
	// DetailedStatus is read from detailedStatus or, failing that, detailed-status.
	DetailedStatus  LooseString    `json:"detailedStatus"`
	Stage           LooseString    `json:"stage"`
	OperationParams map[string]any `json:"operationParams"`
}

// UnmarshalJSON reads an operation record; OSM spells the detailed status
// both detailedStatus and detailed-status.
func (o *Operation) UnmarshalJSON(data []byte) error {
	type plain Operation
	var record struct {
		plain
		DashedStatus LooseString `json:"detailed-status"`
	}
	if err := json.Unmarshal(data, &record); err != nil {
		return err
	}
	*o = Operation(record.plain)
	if o.DetailedStatus == "" {
		o.DetailedStatus = record.DashedStatus
	}
	return nil
}

// checkIDs checks the ids and the states of an LCM operation (answerID): its _id
// (status.operations[].id, status.history, the path it is polled at), its NS instance's, its
// operationState (status.operations[].state) and its lcmOperationType.
func (o *Operation) checkIDs() error {
	return checkAnswerFields(idField("_id", o.ID), idField("nsInstanceId", o.NSInstanceID),
		enumField("operationState", o.OperationState), enumField("lcmOperationType", o.LCMOperationType))
}

// StartedAt is when the operation started: the zero time when OSM wrote none, or one that is
// no time (answerTime), which makes how long it ran unknown.
func (o Operation) StartedAt() time.Time {
	at, _ := answerTime(o.StartTime)
	return at
}

// StatusEnteredAt is when the operation entered its current state, as StartedAt reads it.
func (o Operation) StatusEnteredAt() time.Time {
	at, _ := answerTime(o.StatusEnteredTime)
	return at
}

// Done tells whether the operation has ended, well or badly. ROLLING_BACK
// is still under way.
func (o Operation) Done() bool {
	switch o.OperationState {
	case OperationCompleted, OperationPartiallyCompleted, OperationFailedTemp, OperationFailed, OperationRolledBack:
		return true
	}
	return false
}

// Succeeded tells whether the operation ended completely well.
func (o Operation) Succeeded() bool { return o.OperationState == OperationCompleted }
