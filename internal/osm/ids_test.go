package osm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// hostileIDs are what a hostile NBI may write where OSM writes an id or an enumerated value,
// with the reason the refusal gives. None is an id: OSM's are UUIDs.
var hostileIDs = []struct {
	name, value, reason string
}{
	// Larger than a small answer (the ids a write returns), which its bound refuses first.
	{"100 KiB", strings.Repeat("a", 100<<10), "102400 bytes, more than 64"},
	{"60 KiB", strings.Repeat("a", 60<<10), "61440 bytes, more than 64"},
	{"65 bytes", strings.Repeat("b", 65), "65 bytes, more than 64"},
	{"terminal escape", "ns-\x1b[2K\r\x1b[1A", "12 bytes, not all printable ASCII without spaces"},
	{"NUL", "ns\x00", "3 bytes, not all printable ASCII without spaces"},
	{"newline", "ns\n1", "4 bytes, not all printable ASCII without spaces"},
	{"space", "ns 1", "4 bytes, not all printable ASCII without spaces"},
	{"DEL", "ns\x7f", "3 bytes, not all printable ASCII without spaces"},
	{"non-ASCII", "ns-é", "5 bytes, not all printable ASCII without spaces"},
	// encoding/json reads an invalid UTF-8 byte as U+FFFD, three bytes.
	{"invalid UTF-8", "ns-\xff", "6 bytes, not all printable ASCII without spaces"},
}

// goodID is a field that is an id, as OSM writes them.
const goodID = "0b6a2c1e-7d3f-4e5a-9c8b-1f2e3d4c5b6a"

// idCheck is a field of an answer that must be an id (or an enumerated value): the call that
// reads it and the answer, whose "$V" is the field's value.
type idCheck struct {
	answerType, path string
	// enumerated fields name their value "a value OSM writes" rather than "an id".
	enumerated bool
	// status is the answer's, 200 unless set: that of a write, whose answer is a small one.
	status int
	answer string
	call   func(context.Context, *Client) error
}

// returning makes a call of one result into an idCheck's call.
func returning[T any](call func(context.Context, *Client) (T, error)) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		_, err := call(ctx, c)
		return err
	}
}

// idChecks are every field of an answer that is an id the operator reads, through the call of
// the operator that decodes it (and the tests' calls that decode a single record).
func idChecks(t *testing.T) []idCheck {
	knf := OpenLDAPPackage(t, "openldap_knf")
	since := time.Unix(1700000000, 0)
	listVIMs := returning(func(ctx context.Context, c *Client) ([]VIMAccount, error) { return c.ListVIMAccounts(ctx) })
	listNSDs := returning(func(ctx context.Context, c *Client) ([]NSDescriptor, error) { return c.ListNSDescriptors(ctx) })
	listVNFDs := returning(func(ctx context.Context, c *Client) ([]VNFDescriptor, error) { return c.ListVNFDescriptors(ctx) })
	listNS := returning(func(ctx context.Context, c *Client) ([]NSInstance, error) { return c.ListNSInstances(ctx, "ldap") })
	listNSByParam := returning(func(ctx context.Context, c *Client) ([]NSInstance, error) {
		return c.ListNSInstancesByParam(ctx, "osmops_owner", "tenant")
	})
	getNS := returning(func(ctx context.Context, c *Client) (*NSInstance, error) { return c.GetNSInstance(ctx, "n1") })
	listVNFs := returning(func(ctx context.Context, c *Client) ([]VNFInstance, error) { return c.ListVNFInstances(ctx, "n1") })
	allVNFs := returning(func(ctx context.Context, c *Client) ([]VNFInstance, error) { return c.ListVNFInstances(ctx) })
	operationsSince := returning(func(ctx context.Context, c *Client) ([]Operation, error) {
		return c.ListOperationsSince(ctx, since, "op1")
	})
	running := returning(func(ctx context.Context, c *Client) ([]Operation, error) { return c.ListRunningOperations(ctx, "n1") })
	actions := returning(func(ctx context.Context, c *Client) ([]Operation, error) { return c.ListCompletedActions(ctx, "n1") })
	getOperation := returning(func(ctx context.Context, c *Client) (*Operation, error) { return c.GetOperation(ctx, "op1") })

	const (
		vim       = `[{"_id": $V, "name": "site1", "vim_type": "openstack"}]`
		nsd       = `[{"_id": $V, "id": "openldap_ns", "vnfd-id": ["openldap_knf"]}]`
		vnfd      = `[{"_id": $V, "id": "openldap_knf"}]`
		nsID      = `[{"_id": $V, "name": "ldap", "nsState": "READY", "additionalParamsForNs": {"osmops_owner": "tenant"}}]`
		vimOfNS   = `[{"_id": "n1", "name": "ldap", "instantiate_params": {"vimAccountId": $V}, "additionalParamsForNs": {"osmops_owner": "tenant"}}]`
		nsState   = `[{"_id": "n1", "name": "ldap", "nsState": $V, "additionalParamsForNs": {"osmops_owner": "tenant"}}]`
		adminNS   = `[{"_id": "n1", "name": "ldap", "_admin": {"nsState": $V}, "additionalParamsForNs": {"osmops_owner": "tenant"}}]`
		projects  = `[{"_id": "n1", "name": "ldap", "_admin": {"projects_read": ["p1", $V]}, "additionalParamsForNs": {"osmops_owner": "tenant"}}]`
		vnfID     = `[{"_id": $V, "nsr-id-ref": "n1", "member-vnf-index-ref": "openldap"}]`
		vnfNS     = `[{"_id": "v1", "nsr-id-ref": $V}]`
		vnfPkg    = `[{"_id": "v1", "nsr-id-ref": "n1", "vnfd-id": $V}]`
		vnfVIM    = `[{"_id": "v1", "nsr-id-ref": "n1", "vim-account-id": $V}]`
		opID      = `[{"_id": $V, "nsInstanceId": "n1", "operationState": "PROCESSING", "lcmOperationType": "action"}]`
		opNS      = `[{"_id": "op1", "nsInstanceId": $V, "operationState": "COMPLETED", "lcmOperationType": "action"}]`
		opState   = `[{"_id": "op1", "nsInstanceId": "n1", "operationState": $V, "lcmOperationType": "action"}]`
		opType    = `[{"_id": "op1", "nsInstanceId": "n1", "operationState": "COMPLETED", "lcmOperationType": $V}]`
		oneOpID   = `{"_id": $V, "operationState": "COMPLETED"}`
		oneNSID   = `{"_id": $V, "name": "ldap"}`
		oneOpType = `{"_id": "op1", "operationState": "COMPLETED", "lcmOperationType": $V}`
	)
	return []idCheck{
		{answerType: "VIMAccount", path: "_id", answer: vim, call: listVIMs},
		{answerType: "NSDescriptor", path: "_id", answer: nsd, call: listNSDs},
		{answerType: "VNFDescriptor", path: "_id", answer: vnfd, call: listVNFDs},
		{answerType: "NSInstance", path: "_id", answer: nsID, call: listNS},
		{answerType: "NSInstance", path: "_id", answer: nsID, call: listNSByParam},
		{answerType: "NSInstance", path: "_id", answer: oneNSID, call: getNS},
		{answerType: "NSInstance", path: "instantiate_params.vimAccountId", answer: vimOfNS, call: listNS},
		{answerType: "NSInstance", path: "nsState", enumerated: true, answer: nsState, call: listNS},
		{answerType: "NSInstance", path: "_admin.nsState", enumerated: true, answer: adminNS, call: listNS},
		{answerType: "NSInstance", path: "_admin.projects_read[1]", answer: projects, call: listNS},
		{answerType: "VNFInstance", path: "_id", answer: vnfID, call: listVNFs},
		// Refused, not dropped as a record of another NS instance would be: a malformed answer
		// must not look like a missing record.
		{answerType: "VNFInstance", path: "nsr-id-ref", answer: vnfNS, call: listVNFs},
		{answerType: "VNFInstance", path: "nsr-id-ref", answer: vnfNS, call: allVNFs},
		{answerType: "VNFInstance", path: "vnfd-id", answer: vnfPkg, call: listVNFs},
		{answerType: "VNFInstance", path: "vim-account-id", answer: vnfVIM, call: listVNFs},
		// An operation polled whose _id is not one would otherwise read as completed (unlisted).
		{answerType: "Operation", path: "_id", answer: opID, call: operationsSince},
		{answerType: "Operation", path: "_id", answer: opID, call: running},
		{answerType: "Operation", path: "_id", answer: oneOpID, call: getOperation},
		{answerType: "Operation", path: "nsInstanceId", answer: opNS, call: actions},
		{answerType: "Operation", path: "operationState", enumerated: true, answer: opState, call: operationsSince},
		{answerType: "Operation", path: "lcmOperationType", enumerated: true, answer: opType, call: actions},
		{answerType: "Operation", path: "lcmOperationType", enumerated: true, answer: oneOpType, call: getOperation},
		{answerType: "NSInstanceCreated", path: "id", status: http.StatusCreated, answer: `{"id": $V, "nslcmop_id": "op1"}`,
			call: returning(func(ctx context.Context, c *Client) (*NSInstanceCreated, error) {
				return c.CreateNSInstance(ctx, NSInstanceCreate{Name: "ldap", NsdID: "nsd-1", VIMAccountID: "vim-1"})
			})},
		{answerType: "NSInstanceCreated", path: "nslcmop_id", status: http.StatusCreated, answer: `{"id": "n1", "nslcmop_id": $V}`,
			call: returning(func(ctx context.Context, c *Client) (*NSInstanceCreated, error) {
				return c.CreateNSInstance(ctx, NSInstanceCreate{Name: "ldap", NsdID: "nsd-1", VIMAccountID: "vim-1"})
			})},
		{answerType: "idAnswer", path: "id", status: http.StatusCreated, answer: `{"id": $V}`,
			call: returning(func(ctx context.Context, c *Client) (string, error) { return c.CreatePackage(ctx, knf) })},
		{answerType: "operationAnswer", path: "id", status: http.StatusAccepted, answer: `{"id": $V}`,
			call: returning(func(ctx context.Context, c *Client) (string, error) {
				return c.UpgradeKDU(ctx, "n1", KDUUpgrade{MemberVnfIndex: "openldap", KDUName: "ldap", Params: map[string]any{"replicaCount": 3}})
			})},
		{answerType: "operationAnswer", path: "id", status: http.StatusAccepted, answer: `{"id": $V}`,
			call: returning(func(ctx context.Context, c *Client) (string, error) {
				return c.ChangeVNFPackage(ctx, "n1", VNFPackageChange{VNFInstanceID: "v1", VnfdID: "vnfd-1"})
			})},
		{answerType: "deletionAnswer", path: "_id", status: http.StatusAccepted, answer: `{"_id": $V, "nsName": "ldap"}`,
			call: returning(func(ctx context.Context, c *Client) (string, error) { return c.DeleteNSInstance(ctx, "n1", false) })},
	}
}

// Every id of an NBI answer the operator reads, and every enumerated value it writes into a
// status, is at most 64 bytes of printable ASCII without spaces: one that is not refuses the
// answer as malformed, through the decoding of each answer type that holds one, with an error
// that names the field and tells its length, never its bytes. The same answer with an id as
// OSM writes them is read.
func TestAnswerIDsOutOfRangeRefuseTheAnswer(t *testing.T) {
	for _, check := range idChecks(t) {
		with := func(value string) string {
			encoded, err := json.Marshal(value)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Replace(check.answer, "$V", string(encoded), 1)
		}
		status := check.status
		if status == 0 {
			status = http.StatusOK
		}
		good := goodID
		if check.enumerated {
			good = OperationCompleted
		}
		name := check.answerType + " " + check.path
		t.Run(name+"/as OSM writes it", func(t *testing.T) {
			nbi := newFakeNBI(t, answer(status, with(good)))
			if err := check.call(t.Context(), nbi.client(t)); err != nil {
				t.Errorf("an answer with an id as OSM writes them is refused: %v", err)
			}
		})
		for _, hostile := range hostileIDs {
			t.Run(name+"/"+hostile.name, func(t *testing.T) {
				nbi := newFakeNBI(t, answer(status, with(hostile.value)))
				err := check.call(t.Context(), nbi.client(t))
				what := "an id"
				if check.enumerated {
					what = "a value OSM writes"
				}
				want := fmt.Sprintf("is not the JSON expected: %sits %s is not %s: %s", itemOf(check.answer), check.path, what, hostile.reason)
				if len(hostile.value) > maxSmallAnswerBytes && check.status != 0 {
					want = fmt.Sprintf("the answer is larger than %d bytes", maxSmallAnswerBytes)
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, want the answer refused: ...%s", err, want)
				}
				if message := err.Error(); strings.ContainsFunc(message, func(r rune) bool { return r < ' ' || r == 0x7f }) ||
					strings.Contains(message, hostile.value) {
					t.Errorf("the error shows the value: %q", message)
				}
			})
		}
	}
}

// itemOf is how the refusal of answer names the record refused: "item 1: " in a list.
func itemOf(answer string) string {
	if strings.HasPrefix(answer, "[") {
		return "item 1: "
	}
	return ""
}

// An id is at most 64 bytes of printable ASCII without spaces; "" is no id, which the caller
// judges (an NS record without _id is its own error, a deletion answer must name one).
func TestAnswerIDBounds(t *testing.T) {
	for _, value := range []string{"", goodID, "n1", strings.Repeat("f", 32), strings.Repeat("~", 64), "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}",
		OperationPartiallyCompleted, OperationTypeInstantiate, NSStateNotInstantiated} {
		if reason, ok := answerID(value); !ok {
			t.Errorf("answerID(%q) refused: %s", value, reason)
		}
	}
	for _, hostile := range hostileIDs {
		// As an answer holds it: encoding/json reads invalid UTF-8 as U+FFFD.
		encoded, _ := json.Marshal(hostile.value)
		var decoded string
		if err := json.Unmarshal(encoded, &decoded); err != nil {
			t.Fatal(err)
		}
		if reason, ok := answerID(decoded); ok || reason != hostile.reason {
			t.Errorf("answerID(%s) = %q, %v; want %q", hostile.name, reason, ok, hostile.reason)
		}
	}
}

// A list refused for a record is refused whole, whichever record holds the id that is not one,
// and the records before it are not returned.
func TestAnswerIDOutOfRangeRefusesTheWholeList(t *testing.T) {
	records := `[{"_id": "n1", "name": "ldap"}, {"_id": "n2", "name": "ldap"}, {"_id": "n\u001b3", "name": "ldap"}]`
	nbi := newFakeNBI(t, answer(http.StatusOK, records))
	instances, err := nbi.client(t).ListNSInstances(t.Context(), "ldap")
	if want := "item 3: its _id is not an id: 3 bytes"; err == nil || !strings.Contains(err.Error(), want) || instances != nil {
		t.Errorf("got %v, %v; want no records and %q", instances, err, want)
	}
}
