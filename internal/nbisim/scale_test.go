package nbisim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// manyNS is the size of the OSM the benchmark lists; the test checks a smaller one, which
// takes the same paths.
const manyNS = 10_000

// withManyNS creates n instantiated NS instances of the openldap NS.
func withManyNS(tb testing.TB, n int) *harness {
	tb.Helper()
	h := newLoggedIn(tb, Config{Quotas: map[string]int{QuotaNSInstances: n}}) // beyond OSM's default, 500
	_, nsdID := h.onboardOpenLDAP()
	vim := h.vimID("vim1")
	for i := range n {
		h.createNS(ldapCreateBody(fmt.Sprintf("ns-%05d", i), nsdID, vim, map[string]any{"replicaCount": fmt.Sprint(i % 5)}))
	}
	h.clock.Step(testOperationDelay)
	h.sim.CompleteOperations()
	return h
}

// TestManyNSInstances checks that the simulator holds a large OSM correctly. How fast it
// answers is BenchmarkListNSInstances's to measure, not a test's: a loaded machine would fail
// a time limit without anything being wrong.
func TestManyNSInstances(t *testing.T) {
	const count = 1_000
	h := withManyNS(t, count)
	if state := h.sim.State(); len(state.NSInstances) != count {
		t.Fatalf("%d NS instances", len(state.NSInstances))
	}
	list := h.must(http.StatusOK, "GET", nsContentPath, nil)
	if records := list.list(t); len(records) != count || dig(records[count-1], "nsState") != "READY" {
		t.Fatalf("listed %d NS instances", len(records))
	}
	named := h.must(http.StatusOK, "GET", nsContentPath+fmt.Sprintf("?name=ns-%05d", count-1), nil).list(t)
	vnfs := h.must(http.StatusOK, "GET", vnfInstancePath+"?nsr-id-ref="+dig(named[0], "_id").(string), nil).list(t)
	if len(named) != 1 || len(vnfs) != 1 {
		t.Errorf("look-ups by name and NS: %d, %d", len(named), len(vnfs))
	}
	if pending := h.sim.State().PendingOperations; pending != 0 {
		t.Errorf("%d operations pending", pending)
	}
}

func BenchmarkListNSInstances(b *testing.B) {
	h := withManyNS(b, manyNS)
	request := httptest.NewRequest("GET", nsContentPath, nil)
	request.Header.Set("Authorization", "Bearer "+h.token)
	for b.Loop() {
		w := &discardWriter{header: http.Header{}}
		h.sim.ServeHTTP(w, request)
		if w.status != http.StatusOK {
			b.Fatal(w.status)
		}
		b.SetBytes(w.written)
	}
}

// discardWriter is a ResponseWriter that counts the body and keeps nothing,
// so that the benchmark measures the server rather than a buffer.
type discardWriter struct {
	header  http.Header
	status  int
	written int64
}

func (w *discardWriter) Header() http.Header    { return w.header }
func (w *discardWriter) WriteHeader(status int) { w.status = status }
func (w *discardWriter) Write(b []byte) (int, error) {
	w.written += int64(len(b))
	return len(b), nil
}
