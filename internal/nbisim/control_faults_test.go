package nbisim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLatencyFault(t *testing.T) {
	sleeper := &sleepRecorder{}
	h := newLoggedIn(t, Config{Sleep: sleeper.Sleep})
	if err := h.sim.AddFault(Fault{PathPrefix: "/osm/nslcm", Method: "get", Latency: 250 * time.Millisecond, Count: 2}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.AddFault(Fault{PathPrefix: "/osm/nslcm", Latency: time.Second, Count: 1}); err != nil {
		t.Fatal(err)
	}
	h.must(http.StatusOK, "GET", "/osm/admin/v1/vim_accounts", nil) // no match
	h.must(http.StatusOK, "GET", nsContentPath, nil)                // both
	h.must(http.StatusOK, "GET", nsContentPath, nil)                // the first
	h.must(http.StatusOK, "GET", nsContentPath, nil)                // none left
	want := []time.Duration{1250 * time.Millisecond, 250 * time.Millisecond}
	if diff := cmp.Diff(want, sleeper.total()); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
	if faults := h.sim.Faults(); len(faults) != 0 {
		t.Errorf("faults left: %+v", faults)
	}
}

func TestErrorRateIsReproducible(t *testing.T) {
	run := func(seed uint64) []int {
		h := newHarness(t, Config{Seed: seed})
		if err := h.sim.AddFault(Fault{Status: 503, Rate: 0.5}); err != nil {
			t.Fatal(err)
		}
		statuses := make([]int, 200)
		for i := range statuses {
			statuses[i] = h.request("GET", "/osm/version", nil).status
		}
		return statuses
	}
	first, again, other := run(7), run(7), run(8)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("the same seed gave other statuses:\n%s", diff)
	}
	if cmp.Equal(first, other) {
		t.Error("another seed gave the same statuses")
	}
	failed := 0
	for _, status := range first {
		if status == 503 {
			failed++
		}
	}
	if failed < 70 || failed > 130 {
		t.Errorf("%d of 200 requests failed at rate 0.5", failed)
	}
}

func TestErrorFault(t *testing.T) {
	h := newLoggedIn(t, Config{})
	if err := h.sim.AddFault(Fault{Status: 429, Method: "POST", Count: 1}); err != nil {
		t.Fatal(err)
	}
	h.must(http.StatusOK, "GET", "/osm/version", nil)
	a := h.request("POST", "/osm/admin/v1/tokens", nil)
	if a.status != 429 || a.header.Get("Retry-After") != "1" || string(a.body) != errorBody(429, "fault injected by the NBI simulator") {
		t.Errorf("injected 429: %d %v %s", a.status, a.header, a.body)
	}
	h.login() // the count is used up

	for _, bad := range []Fault{{}, {Status: 200}, {Status: 500, Rate: 2}, {Latency: -1}, {Reset: true, Count: -1}} {
		if err := h.sim.AddFault(bad); err == nil {
			t.Errorf("AddFault(%+v) accepted", bad)
		}
	}
}

func TestResetFault(t *testing.T) {
	sim := New(Config{})
	server := httptest.NewServer(sim)
	defer server.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	if err := sim.AddFault(Fault{Reset: true, PathPrefix: "/osm/version", Count: 1}); err != nil {
		t.Fatal(err)
	}
	if response, err := client.Get(server.URL + "/osm/version"); err == nil {
		response.Body.Close()
		t.Fatalf("a reset request got an answer: %s", response.Status)
	}
	response, err := client.Get(server.URL + "/osm/version")
	if err != nil {
		t.Fatalf("after the reset: %v", err)
	}
	response.Body.Close()
	if log := sim.RequestLog(); len(log) != 2 || log[0].Status != 0 || log[1].Status != 200 {
		t.Errorf("request log = %+v", log)
	}
}

func TestStatsAreExact(t *testing.T) {
	sim := New(Config{RequestLogSize: 3, VIMAccounts: []VIMAccount{{Name: "vim1"}}})
	server := httptest.NewServer(sim)
	defer server.Close()
	var received, sent int64
	send := func(method, path, body, token string) []byte {
		t.Helper()
		request, err := http.NewRequest(method, server.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			request.Header.Set("Authorization", "Bearer "+token)
		}
		response, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		defer response.Body.Close()
		answer, err := io.ReadAll(response.Body)
		if err != nil {
			t.Fatal(err)
		}
		received += int64(len(body))
		sent += int64(len(answer))
		return answer
	}
	var token struct{ ID string }
	if err := json.Unmarshal(send("POST", "/osm/admin/v1/tokens", `{"username":"admin","password":"admin"}`, ""), &token); err != nil {
		t.Fatal(err)
	}
	send("GET", "/osm/admin/v1/vim_accounts", "", token.ID)
	send("GET", "/osm/admin/v1/vim_accounts", "", token.ID)
	send("GET", "/osm/admin/v1/vim_accounts", "", "")
	send("GET", "/osm/nslcm/v1/nothing", "", token.ID)
	send("DELETE", "/osm/admin/v1/tokens/"+token.ID, "", "")
	controlAnswer := send("GET", "/sim/v1/stats", "", "") // the control API is not counted

	stats := sim.Stats()
	if stats.Requests != 6 || stats.MutatingRequests != 0 || stats.SessionRequests != 2 || stats.ReadRequests != 4 ||
		stats.BytesReceived != received || stats.BytesSent != sent-int64(len(controlAnswer)) {
		t.Errorf("totals = %+v, want 6 requests (2 session, 4 read), %d bytes received, %d sent",
			stats, received, sent-int64(len(controlAnswer)))
	}
	var sentToNBI int64
	for _, e := range stats.Endpoints {
		sentToNBI += e.BytesSent
	}
	if sentToNBI != stats.BytesSent {
		t.Errorf("endpoints sent %d bytes, totals say %d", sentToNBI, stats.BytesSent)
	}
	var got []string
	for _, e := range stats.Endpoints {
		got = append(got, fmt.Sprintf("%s %s %s %d", e.Method, e.Route, http.StatusText(e.Status), e.Requests))
	}
	want := []string{
		"GET (unmatched) Method Not Allowed 1",
		"POST /osm/admin/v1/tokens OK 1",
		"DELETE /osm/admin/v1/tokens/{tokenId} OK 1",
		"GET /osm/admin/v1/vim_accounts OK 2",
		"GET /osm/admin/v1/vim_accounts Unauthorized 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endpoints (-want +got):\n%s", diff)
	}

	log := sim.RequestLog()
	var paths []string
	for _, r := range log {
		paths = append(paths, r.Path)
	}
	if diff := cmp.Diff([]string{"/osm/admin/v1/vim_accounts", "/osm/nslcm/v1/nothing", "/osm/admin/v1/tokens/{tokenId}"}, paths); diff != "" {
		t.Errorf("request log (-want +got):\n%s", diff)
	}
	for _, r := range log {
		if strings.Contains(r.Path, token.ID) {
			t.Errorf("the request log holds the token: %+v", r)
		}
	}
	sim.ResetStats()
	if stats := sim.Stats(); stats.Requests != 0 || len(stats.Endpoints) != 0 || len(sim.RequestLog()) != 0 {
		t.Errorf("after ResetStats: %+v", stats)
	}
}

func TestControlAPI(t *testing.T) {
	h := newLoggedIn(t, Config{})
	control := func(method, path, body string, want int) string {
		t.Helper()
		saved := h.token
		h.token = ""
		defer func() { h.token = saved }()
		a := h.request(method, "/sim/v1/"+path, body)
		if a.status != want {
			t.Fatalf("%s /sim/v1/%s: %d, want %d: %s", method, path, a.status, want, a.body)
		}
		return string(a.body)
	}

	control("POST", "faults", `{"status": 502, "pathPrefix": "/osm/version", "count": 1, "latency": "10ms"}`, 201)
	if got := control("GET", "faults", "", 200); !strings.Contains(got, `"latency": "10ms"`) {
		t.Errorf("faults = %s", got)
	}
	h.must(http.StatusBadGateway, "GET", "/osm/version", nil)
	control("POST", "faults", `{"latency": "soon"}`, 400)
	control("POST", "faults", `{"reset": true, "colour": "red"}`, 400)
	control("POST", "faults", `{"reset": true}`, 201)
	control("DELETE", "faults", "", 204)
	h.must(http.StatusOK, "GET", "/osm/version", nil)

	control("POST", "operation-failures", `{"operation": "instantiate", "message": "boom", "count": 1}`, 201)
	control("POST", "operation-failures", `{"state": "LOST"}`, 400)
	if got := control("GET", "operation-failures", "", 200); !strings.Contains(got, `"message": "boom"`) {
		t.Errorf("operation failures = %s", got)
	}
	control("DELETE", "operation-failures", "", 204)

	if got := control("PATCH", "settings", `{"operationDelay": "3s", "tokenLifetime": "2h"}`, 200); !strings.Contains(got, `"operationDelay": "3s"`) {
		t.Errorf("settings = %s", got)
	}
	control("PATCH", "settings", `{"operationDelay": "-1s"}`, 400)
	if settings := h.sim.Settings(); settings.OperationDelay != 3*time.Second || settings.TokenLifetime != 2*time.Hour {
		t.Errorf("Settings() = %+v", settings)
	}
	control("POST", "operations/hold", "", 204)
	if got := control("GET", "settings", "", 200); !strings.Contains(got, `"operationsHeld": true`) {
		t.Errorf("settings after hold = %s", got)
	}
	control("POST", "operations/release", "", 204)
	if got := control("POST", "operations/complete", "", 200); !strings.Contains(got, `"completed": 0`) {
		t.Errorf("complete = %s", got)
	}
	if got := control("GET", "state", "", 200); !strings.Contains(got, `"name": "vim1"`) {
		t.Errorf("state = %s", got)
	}
	if got := control("POST", "tokens/revoke", "", 200); !strings.Contains(got, `"revoked": 1`) {
		t.Errorf("revoke = %s", got)
	}
	h.must(http.StatusUnauthorized, "GET", nsContentPath, nil)
	h.login()
	if got := control("GET", "stats", "", 200); !strings.Contains(got, `"requests"`) {
		t.Errorf("stats = %s", got)
	}
	if got := control("GET", "requests", "", 200); !strings.Contains(got, `"path": "/osm/version"`) {
		t.Errorf("requests = %s", got)
	}
	control("DELETE", "stats", "", 204)
	control("DELETE", "state", "", 204)
	if state := h.sim.State(); state.Tokens != 0 || len(state.VIMAccounts) != 2 {
		t.Errorf("after reset: %+v", state)
	}
	control("GET", "nothing", "", 404)
}
