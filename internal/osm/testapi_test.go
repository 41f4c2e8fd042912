package osm

// The calls, options and error tests below are the tests' only: the operator never makes these
// calls, and always runs with the default HTTP client, user agent, clock and answer bound. The
// tests use them to drive the simulator, check requests against OSM's spec, and reach limits
// quickly. OpenLDAPPackage is here so that the tests of both test packages share it.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/osmops/osmops/internal/osmpkg"
)

// GetNSInstance returns one NS instance by id.
func (c *Client) GetNSInstance(ctx context.Context, id string) (*NSInstance, error) {
	return fetch[NSInstance](ctx, c, getNSInstanceRequest(id))
}

// GetOperation returns one LCM operation by id.
func (c *Client) GetOperation(ctx context.Context, id string) (*Operation, error) {
	return fetch[Operation](ctx, c, getOperationRequest(id))
}

// ListOperations returns the LCM operations of an NS instance, or every
// operation when nsInstanceID is empty.
func (c *Client) ListOperations(ctx context.Context, nsInstanceID string) ([]Operation, error) {
	return list[Operation](ctx, c, listOperationsRequest(nsInstanceID), nil)
}

// DeletePackage deletes the package of the given kind with OSM id id.
func (c *Client) DeletePackage(ctx context.Context, kind osmpkg.Kind, id string) error {
	req, err := deletePackageRequest(kind, id)
	if err != nil {
		return err
	}
	return c.do(ctx, req)
}

// ScaleNSInstance scales a VNF of an NS instance and returns the LCM operation id.
func (c *Client) ScaleNSInstance(ctx context.Context, nsInstanceID string, scale NSScale) (string, error) {
	req, err := scaleNSInstanceRequest(nsInstanceID, scale)
	if err != nil {
		return "", err
	}
	return c.doForOperation(ctx, req)
}

// TerminateNSInstance terminates an NS instance and returns the LCM
// operation id; with autoremove OSM deletes the record when done.
func (c *Client) TerminateNSInstance(ctx context.Context, id string, autoremove bool) (string, error) {
	req, err := terminateNSInstanceRequest(id, autoremove)
	if err != nil {
		return "", err
	}
	return c.doForOperation(ctx, req)
}

// Logout revokes the Client's token, if it has one. The Client logs in
// again on its next call.
func (c *Client) Logout(ctx context.Context) error {
	c.tokenMutex.Lock()
	current := c.token
	c.token = nil
	c.tokenMutex.Unlock()
	if current == nil {
		return nil
	}
	return c.send(ctx, logoutRequest(current.id), current.id, oneObject(maxSmallAnswerBytes, nil))
}

// ScaleDirection is the direction of a VNF scaling.
type ScaleDirection string

// Scaling directions.
const (
	ScaleOut ScaleDirection = "SCALE_OUT"
	ScaleIn  ScaleDirection = "SCALE_IN"
)

// NSScale scales a VNF of an NS instance by one step of a scaling group.
type NSScale struct {
	MemberVnfIndex string
	// ScalingGroup is the VNFD's scaling-group-descriptor.
	ScalingGroup string
	Direction    ScaleDirection
}

// filter is a list filter; an empty value means no filter.
func filter(name, value string) url.Values {
	if value == "" {
		return nil
	}
	return url.Values{name: {value}}
}

// logoutRequest revokes a token.
func logoutRequest(tokenID string) request {
	const route = "/admin/v1/tokens/{id}"
	return request{method: http.MethodDelete, route: route, path: withID(route, tokenID)}
}

func getNSInstanceRequest(id string) request {
	const route = "/nslcm/v1/ns_instances_content/{id}"
	return getRequest(route, withID(route, id), nil)
}

func getOperationRequest(id string) request {
	const route = "/nslcm/v1/ns_lcm_op_occs/{id}"
	return getRequest(route, withID(route, id), nil)
}

func listOperationsRequest(nsInstanceID string) request {
	return getRequest("/nslcm/v1/ns_lcm_op_occs", "/nslcm/v1/ns_lcm_op_occs", filter("nsInstanceId", nsInstanceID))
}

func deletePackageRequest(kind osmpkg.Kind, id string) (request, error) {
	route, known := map[osmpkg.Kind]string{
		osmpkg.KindVNF: "/vnfpkgm/v1/vnf_packages_content/{id}",
		osmpkg.KindNS:  "/nsd/v1/ns_descriptors_content/{id}",
	}[kind]
	if !known {
		return request{}, fmt.Errorf("OSM NBI: unknown package kind %q", kind)
	}
	return request{method: http.MethodDelete, route: route, path: withID(route, id)}, nil
}

func scaleNSInstanceRequest(nsInstanceID string, scale NSScale) (request, error) {
	const route = "/nslcm/v1/ns_instances/{id}/scale"
	return jsonRequest(http.MethodPost, route, withID(route, nsInstanceID), map[string]any{
		"scaleType": "SCALE_VNF",
		"scaleVnfData": map[string]any{
			"scaleVnfType": scale.Direction,
			"scaleByStepData": map[string]any{
				"scaling-group-descriptor": scale.ScalingGroup,
				"member-vnf-index":         scale.MemberVnfIndex,
			},
		},
	})
}

func terminateNSInstanceRequest(id string, autoremove bool) (request, error) {
	const route = "/nslcm/v1/ns_instances/{id}/terminate"
	return jsonRequest(http.MethodPost, route, withID(route, id), map[string]any{"autoremove": autoremove})
}

// WithHTTPClient makes the Client send its requests with httpClient. The TLS
// options, if given too, apply to a copy of its *http.Transport.
func WithHTTPClient(httpClient *http.Client) Option {
	return func(s *settings) error {
		if httpClient == nil {
			return errors.New("WithHTTPClient: nil HTTP client")
		}
		s.httpClient = httpClient
		return nil
	}
}

// WithUserAgent sets the User-Agent header (default DefaultUserAgent).
func WithUserAgent(userAgent string) Option {
	return func(s *settings) error {
		s.userAgent = userAgent
		return nil
	}
}

// WithMaxResponseBytes bounds every successful answer (default DefaultMaxResponseBytes: a
// list of 10,000 NS records is large): a list's bytes, and the memory its records take once
// decoded. One record has a lower bound of its own (1 or 4 MiB by kind), alone or in a list;
// an answer small by nature (a login, the version), 64 KiB.
func WithMaxResponseBytes(n int64) Option {
	return func(s *settings) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxResponseBytes: %d is not positive", n)
		}
		s.maxResponseBytes = n
		return nil
	}
}

// WithClock replaces time.Now for token expiry, for tests.
func WithClock(now func() time.Time) Option {
	return func(s *settings) error {
		s.now = now
		return nil
	}
}

// IsBadRequest tells whether err is the NBI's 400.
func IsBadRequest(err error) bool { return statusOf(err) == http.StatusBadRequest }

// IsUnprocessable tells whether err is the NBI's 422 (a schema error).
func IsUnprocessable(err error) bool { return statusOf(err) == http.StatusUnprocessableEntity }

// OpenLDAPPackage builds one of the openldap packages of osmpkg's testdata, for the tests of
// both test packages.
func OpenLDAPPackage(tb testing.TB, name string) *osmpkg.Package {
	tb.Helper()
	pkg, err := osmpkg.Build(filepath.Join("..", "osmpkg", "testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return pkg
}
