package osm

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// hostileNumbers are what a hostile NBI may write where OSM writes a time or a count, as JSON
// (Number reads a string holding a number too), with the count answerCount reads of each.
var hostileNumbers = []struct {
	name, json string
	count      int
}{
	{"NaN", `"NaN"`, 0},
	{"+Inf", `"Infinity"`, math.MaxInt32},
	{"-Inf", `"-inf"`, 0},
	{"beyond float64", `1e400`, math.MaxInt32},
	{"1e300", `1e300`, math.MaxInt32},
	{"-1e300", `-1e300`, 0},
	{"negative", `-86400`, 0},
	{"year 10000", `253402300800`, math.MaxInt32},
}

// warningLog captures the out-of-range lines a Client logs.
type warningLog struct {
	mutex sync.Mutex
	lines []map[string]any
	raw   []string
}

// context returns a context whose logger writes into the capture.
func (w *warningLog) context(t *testing.T) context.Context {
	logger := funcr.NewJSON(func(obj string) {
		var line map[string]any
		if err := json.Unmarshal([]byte(obj), &line); err != nil {
			t.Errorf("a log line is not JSON: %v: %s", err, obj)
		}
		w.mutex.Lock()
		defer w.mutex.Unlock()
		if line["msg"] == OutOfRangeMessage {
			w.lines = append(w.lines, line)
			w.raw = append(w.raw, obj)
		}
	}, funcr.Options{})
	return log.IntoContext(t.Context(), logger)
}

// fields returns the fields the lines name, and checks that no line shows the number.
func (w *warningLog) fields(t *testing.T, number string) []string {
	t.Helper()
	w.mutex.Lock()
	defer w.mutex.Unlock()
	var fields []string
	for i, line := range w.lines {
		fields = append(fields, line["field"].(string))
		if strings.Contains(w.raw[i], strings.Trim(number, `"`)) {
			t.Errorf("the warning shows the number: %s", w.raw[i])
		}
	}
	return fields
}

// nbiAnswering is an NBI that answers a login with token and the user's record with user,
// whatever the request.
func nbiAnswering(t *testing.T, token, user string) *Client {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := user
		if r.URL.Path == "/osm/admin/v1/tokens" {
			body = token
		}
		answer(http.StatusOK, body)(w, r)
	}))
	t.Cleanup(server.Close)
	client, err := NewClient(server.URL, testCredentials, WithClock(newFakeClock().Now))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// Every time and count of an NBI answer that is out of range is dropped, or clamped, through
// the decoding of each field: no panic, no error but for a login without an expiry, and a
// warning, which never shows the number, for the dropped times a person may miss.
func TestNumbersOutOfRangeAreDroppedOrClamped(t *testing.T) {
	now := newFakeClock().Now()
	for _, number := range hostileNumbers {
		t.Run(number.name, func(t *testing.T) {
			with := func(template string) string { return strings.ReplaceAll(template, "N", number.json) }

			t.Run("token expires", func(t *testing.T) {
				client := nbiAnswering(t, with(`{"id": "t", "expires": N, "issued_at": 1000, "project_id": "p"}`), "")
				err := client.Authenticate(t.Context())
				if !IsUnauthorized(err) || !strings.Contains(err.Error(), "the token answer has no expiry that is a time between 1970 and 9999") {
					t.Errorf("got %v, want the login refused for its expiry", err)
				}
			})

			t.Run("token issued_at", func(t *testing.T) {
				var warnings warningLog
				expires := strconv.FormatInt(now.Add(time.Hour).Unix(), 10)
				client := nbiAnswering(t, with(`{"id": "t", "expires": `+expires+`, "issued_at": N}`), "")
				if err := client.Authenticate(warnings.context(t)); err != nil {
					t.Fatal(err)
				}
				// The lifetime runs from the operator's clock: an hour, renewed 5 minutes before.
				if got := client.currentToken().renewAt.Sub(now); got != 55*time.Minute {
					t.Errorf("renewed after %v, want 55m", got)
				}
				if got := warnings.fields(t, number.json); !slices.Equal(got, []string{"issued_at"}) {
					t.Errorf("warnings of %v, want issued_at", got)
				}
			})

			t.Run("user record", func(t *testing.T) {
				var warnings warningLog
				client := nbiAnswering(t, `{"id": "t", "expires": 4600, "issued_at": 1000, "user_id": "u-1"}`,
					with(`{"_id": "u-1", "_admin": {"password_expire_time": N, "account_expire_time": N}}`))
				ctx := warnings.context(t)
				if err := client.Authenticate(ctx); err != nil {
					t.Fatal(err)
				}
				expiry, err := client.UserExpiry(ctx)
				if err != nil || expiry != (UserExpiry{}) {
					t.Errorf("UserExpiry = %+v, %v; want unknown", expiry, err)
				}
				if got := warnings.fields(t, number.json); !slices.Equal(got, []string{"_admin.password_expire_time", "_admin.account_expire_time"}) {
					t.Errorf("warnings of %v, want both expiry times", got)
				}
			})

			t.Run("records", func(t *testing.T) {
				decode := func(template string, into any) {
					t.Helper()
					if err := json.Unmarshal([]byte(with(template)), into); err != nil {
						t.Fatal(err)
					}
				}
				var operation Operation
				decode(`{"_id": "o", "startTime": N, "statusEnteredTime": N}`, &operation)
				if !operation.StartedAt().IsZero() || !operation.StatusEnteredAt().IsZero() {
					t.Errorf("operation times %v, %v; want unknown", operation.StartedAt(), operation.StatusEnteredAt())
				}
				var project Project
				decode(`{"_id": "p", "quotas": {"ns_instances": N}}`, &project)
				if got := project.Quota(QuotaNSInstances); got != number.count {
					t.Errorf("quota %d, want %d", got, number.count)
				}
				var descriptor VNFDescriptor
				decode(`{"_id": "d", "_admin": {"revision": N, "created": N, "modified": N}}`, &descriptor)
				var vnf VNFInstance
				decode(`{"_id": "v", "revision": N}`, &vnf)
				for what, revision := range map[string]Number{"package": descriptor.Admin.Revision, "VNF": vnf.Revision} {
					if revision != Number(number.count) {
						t.Errorf("%s revision %v, want %d", what, revision, number.count)
					}
				}
				// Never read as a time nor a count: decoded only.
				var instance NSInstance
				decode(`{"_id": "i", "create-time": N, "instantiate_params": {"timeout_ns_deploy": N}}`, &instance)
			})
		})
	}
}

// A time read from an answer is one the API server accepts in a status (a metav1.Time, four
// digits of year in RFC 3339), or none.
func TestAnswerTimesInRange(t *testing.T) {
	tests := []struct {
		seconds float64
		want    time.Time
		ok      bool
	}{
		{0, time.Time{}, true},
		{1, time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC), true},
		{1795349499.5, time.Date(2026, 11, 22, 12, 11, 39, 5e8, time.UTC), true},
		{253402300799, time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), true},
		{253402300800, time.Time{}, false},
		{-1, time.Time{}, false},
		{math.NaN(), time.Time{}, false},
		{math.Inf(1), time.Time{}, false},
		{math.Inf(-1), time.Time{}, false},
		{1e300, time.Time{}, false},
		{-1e300, time.Time{}, false},
	}
	for _, test := range tests {
		got, ok := answerTime(Number(test.seconds))
		if !got.Equal(test.want) || ok != test.ok {
			t.Errorf("answerTime(%v) = %v, %v; want %v, %v", test.seconds, got, ok, test.want, test.ok)
		}
		if got.IsZero() {
			continue
		}
		encoded, err := json.Marshal(metav1.NewTime(got))
		if err == nil {
			err = json.Unmarshal(encoded, &metav1.Time{})
		}
		if err != nil {
			t.Errorf("answerTime(%v) = %v, which a status cannot hold: %v", test.seconds, got, err)
		}
	}
	// Why the bound: a second later, the API server could not read the status back.
	encoded, _ := json.Marshal(metav1.NewTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)))
	if json.Unmarshal(encoded, &metav1.Time{}) == nil {
		t.Errorf("a metav1.Time of the year 10000 round-trips: the bound of answerTime could be later")
	}
}

// Durations and counts of answers are clamped to their bounds, NaN to the lower one, and never
// converted beyond what an int64 or an int holds.
func TestAnswerDurationsAndCountsAreClamped(t *testing.T) {
	for _, test := range []struct {
		seconds float64
		want    time.Duration
		ok      bool
	}{
		{90, 90 * time.Second, true},
		{1, time.Minute, false},
		{-1e300, time.Minute, false},
		{math.NaN(), time.Minute, false},
		{1e300, time.Hour, false},
		{math.Inf(1), time.Hour, false},
	} {
		if got, ok := answerDuration(test.seconds, time.Minute, time.Hour); got != test.want || ok != test.ok {
			t.Errorf("answerDuration(%v) = %v, %v; want %v, %v", test.seconds, got, ok, test.want, test.ok)
		}
	}
	for _, test := range []struct {
		n    float64
		want int
	}{
		{3.9, 3}, {0, 0}, {-0.5, 0}, {math.NaN(), 0}, {-1e300, 0}, {1e300, 7}, {math.Inf(1), 7}, {7.5, 7},
	} {
		if got := answerCount(Number(test.n), 7); got != test.want {
			t.Errorf("answerCount(%v, 7) = %d, want %d", test.n, got, test.want)
		}
	}
}

// Python's json writes a NaN or an infinite float bare (NaN, Infinity), which is not JSON: the
// whole answer is refused as any malformed one, its value not quoted.
func TestBarePythonNaNRefusesTheAnswer(t *testing.T) {
	client := nbiAnswering(t, `{"id": "t", "expires": 4600, "issued_at": 1000, "user_id": "u-1"}`,
		`{"_id": "u-1", "_admin": {"password_expire_time": NaN, "account_expire_time": Infinity}}`)
	if err := client.Authenticate(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err := client.UserExpiry(t.Context())
	if err == nil || !strings.Contains(err.Error(), "the 200 answer is not the JSON expected: invalid character 'N'") {
		t.Errorf("got %v, want the answer refused", err)
	}
}
