package osm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodesLikeUnmarshal checks that a list call returns what encoding/json makes of the whole
// answer at once.
func decodesLikeUnmarshal[T any](call func(*Client, context.Context) ([]T, error)) func(*testing.T, *Client, string) {
	return func(t *testing.T, client *Client, body string) {
		var want []T
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		got, err := call(client, t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("streamed decoding differs from json.Unmarshal (-want +got):\n%s", diff)
		}
	}
}

// Lists read record by record decode exactly as encoding/json decodes them whole: OSM's own
// answers, an empty list, null, and white space anywhere JSON allows it.
func TestListsDecodeAsEncodingJSONDoes(t *testing.T) {
	vims := decodesLikeUnmarshal((*Client).ListVIMAccounts)
	instances := decodesLikeUnmarshal(func(c *Client, ctx context.Context) ([]NSInstance, error) { return c.ListNSInstances(ctx) })
	tests := []struct {
		name  string
		body  string
		check func(*testing.T, *Client, string)
	}{
		{"VIM accounts", readSample(t, "vim_list.json"), vims},
		{"NS descriptors", readSample(t, "nsd_list.json"), decodesLikeUnmarshal((*Client).ListNSDescriptors)},
		{"VNF descriptors", readSample(t, "vnfpkg_list.json"), decodesLikeUnmarshal((*Client).ListVNFDescriptors)},
		{"operations", readSample(t, "nslcmop_list.json"),
			decodesLikeUnmarshal(func(c *Client, ctx context.Context) ([]Operation, error) { return c.ListOperations(ctx, "") })},
		{"VNF records", readSample(t, "vnf_instances_knf.json"),
			decodesLikeUnmarshal(func(c *Client, ctx context.Context) ([]VNFInstance, error) { return c.ListVNFInstances(ctx) })},
		{"NS records", "[" + readSample(t, "ns_instance_knf.json") + "]", instances},
		{"empty", "[]", instances},
		{"null", "null", instances},
		{"white space", " \n[ {\"_id\": \"a\"}\t,\r\n{\"_id\": \"b\"} ]\n\n", vims},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			nbi := newFakeNBI(t, answer(http.StatusOK, test.body))
			test.check(t, nbi.client(t), test.body)
		})
	}
	t.Run("one NS record", func(t *testing.T) {
		body := readSample(t, "ns_instance_knf.json")
		var want NSInstance
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		got, err := newFakeNBI(t, answer(http.StatusOK, body)).client(t).GetNSInstance(t.Context(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// A list answer that is not a list of records is refused, and what it holds is not quoted.
func TestListAnswersThatAreNotAList(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"an object", `{"a": 1}`, "the 200 answer is not the JSON expected: json: cannot unmarshal object into Go value of type []osm.NSInstance"},
		{"a string", `"hunter2-secret"`, "cannot unmarshal string into Go value of type []osm.NSInstance"},
		{"a number where a name goes", `[{"_id": "a", "name": 31415926}]`,
			"json: cannot unmarshal number into Go struct field NSInstance.name of type string"},
		{"cut short", `[{"_id": "a"},`, "the 200 answer is not the JSON expected: unexpected EOF"},
		{"two lists", `[] []`, "the 200 answer is not the JSON expected: more follows the JSON value"},
		{"garbage after the list", `[]}`, "the 200 answer is not the JSON expected: invalid character '}'"},
		{"a trailing comma", `[{"_id": "a"},]`, "invalid character ']' looking for beginning of value"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			_, err := newFakeNBI(t, answer(http.StatusOK, test.body)).client(t).ListNSInstances(t.Context())
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Fatalf("got %v, want %q", err, test.want)
			}
			if IsTransient(err) {
				t.Errorf("%v is transient", err)
			}
			for _, secret := range []string{"hunter2", "31415926"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%q quotes the answer", err)
				}
			}
		})
	}
}

// streamed writes an answer without Content-Length: head, then body repeated until size
// bytes are written or the client hangs up.
func streamed(head string, body []byte, size int64) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		written, _ := w.Write([]byte(head))
		for total := int64(written); total < size; total += int64(len(body)) {
			if _, err := w.Write(body); err != nil {
				return
			}
		}
	}
}

// Each record is bounded by its kind, alone or in a list, and a list as a whole by
// WithMaxResponseBytes, both in bytes read and in the memory its records take.
func TestAnswersAreBoundedPerRecordAndInAll(t *testing.T) {
	filler := bytes.Repeat([]byte("x"), 64<<10)
	emptyRecords := bytes.Repeat([]byte("{},"), 1<<10)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		options []Option
		call    func(context.Context, *Client) error
		want    string
	}{
		{"a VIM account of 2 MiB", streamed(`[{"_id": "a", "description": "`, filler, 2<<20), nil,
			func(ctx context.Context, c *Client) error { _, err := c.ListVIMAccounts(ctx); return err },
			"an item of the answer is larger than 1048576 bytes"},
		{"an NS record of 8 MiB alone", streamed(`{"_id": "a", "description": "`, filler, 8<<20), nil,
			func(ctx context.Context, c *Client) error { _, err := c.GetNSInstance(ctx, "a"); return err },
			"the answer is larger than 4194304 bytes"},
		{"an operation alone that decoded would take 45 times its 1 MiB",
			answer(http.StatusOK, `{"_id": "o", "operationParams": {"x": [`+strings.Repeat(`{"a":1},`, 1<<17)+`{}]}}`), nil,
			func(ctx context.Context, c *Client) error { _, err := c.GetOperation(ctx, "o"); return err },
			"the answer would take more than 33554432 bytes of memory decoded"},
		{"a list of 1 MiB over a bound of 100 KiB", streamed(`[`, []byte(`{"_id": "a", "name": "other"},`), 1<<20),
			[]Option{WithMaxResponseBytes(100 << 10)},
			func(ctx context.Context, c *Client) error { _, err := c.ListNSInstances(ctx, "mine"); return err },
			"the answer is larger than 102400 bytes"},
		{"empty records that take more memory than the bound", streamed(`[`, emptyRecords, 1<<20),
			[]Option{WithMaxResponseBytes(1 << 20)},
			func(ctx context.Context, c *Client) error { _, err := c.ListNSInstances(ctx); return err },
			"the records of the answer take more than 1048576 bytes of memory"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			err := test.call(t.Context(), newFakeNBI(t, test.handler).client(t, test.options...))
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Errorf("got %v, want %q", err, test.want)
			}
			if IsTransient(err) {
				t.Errorf("%v is transient: retrying gets the same answer", err)
			}
		})
	}

	t.Run("records not asked for are dropped as they are read", func(t *testing.T) {
		// 1 MiB of records of others would take about 10 MiB of memory, kept.
		others := streamed("[", []byte(`{"_id": "a", "name": "other"},`), 1<<20-100)
		tail := `{"_id": "b", "name": "mine"}]`
		nbi := newFakeNBI(t, func(w http.ResponseWriter, r *http.Request) {
			others(w, r)
			_, _ = w.Write([]byte(tail))
		})
		got, err := nbi.client(t, WithMaxResponseBytes(1<<20)).ListNSInstances(t.Context(), "mine")
		if err != nil || len(got) != 1 || got[0].ID != "b" {
			t.Errorf("got %v, %v; want the one record asked for", got, err)
		}
	})
}

// heapPeak samples the heap in use, from the server's side while it writes and from the
// test's once the call returns.
type heapPeak struct {
	mutex          sync.Mutex
	baseline, peak uint64
}

func newHeapPeak() *heapPeak {
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return &heapPeak{baseline: stats.HeapInuse, peak: stats.HeapInuse}
}

func (h *heapPeak) sample() {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	h.mutex.Lock()
	defer h.mutex.Unlock()
	h.peak = max(h.peak, stats.HeapInuse)
}

func (h *heapPeak) growth() uint64 {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	return h.peak - h.baseline
}

// hostileList is a hostile NBI's answer to a list: head, then chunk again and again, 1 GiB
// in all, without Content-Length, generated as it is written.
type hostileList struct {
	name  string
	head  string
	chunk []byte
	call  func(context.Context, *Client) error
	// recordBound is the bound of one record the client stops at, and want its error; 0 when
	// the client reads up to the list's bound.
	recordBound int64
	want        string
}

// hostileLists are the shapes of hostile list: records too large for their kind, in a field
// the client reads or not, white space, records that decoded take 45 times their size, and
// small records up to the list's bound.
func hostileLists() []hostileList {
	const chunkBytes = 1 << 20
	// records repeats one record to about a chunk's size.
	records := func(record string) []byte {
		return bytes.Repeat([]byte(record), chunkBytes/len(record))
	}
	return []hostileList{
		{"one record, in a field not read", `[{"_id": "a", "junk": "`, bytes.Repeat([]byte("x"), chunkBytes),
			func(ctx context.Context, c *Client) error { _, err := c.ListVNFDescriptors(ctx); return err },
			maxDescriptorRecordBytes, "an item of the answer is larger than 1048576 bytes"},
		{"one record, in a field kept", `[{"_id": "a", "name": "`, bytes.Repeat([]byte("x"), chunkBytes),
			func(ctx context.Context, c *Client) error { _, err := c.ListNSInstances(ctx); return err },
			maxValuesRecordBytes, "an item of the answer is larger than 4194304 bytes"},
		{"white space in a list", `[`, bytes.Repeat([]byte(" \n"), chunkBytes/2),
			func(ctx context.Context, c *Client) error { _, err := c.ListOperations(ctx, ""); return err },
			maxValuesRecordBytes, "an item of the answer is larger than 4194304 bytes"},
		{"records of 1 MiB that decoded would take 45 times that", `[`,
			[]byte(`{"_id": "o", "operationParams": {"x": [` + strings.Repeat(`{"a":1},`, chunkBytes/8-8) + `{}]}},`),
			func(ctx context.Context, c *Client) error { _, err := c.ListOperations(ctx, ""); return err },
			maxValuesRecordBytes, "an item of the answer would take more than 33554432 bytes of memory decoded"},
		{"records of 16 KiB, in a field not read", `[`,
			records(`{"_id": "d", "id": "vnfd", "junk": "` + strings.Repeat("x", 16<<10) + `"},`),
			func(ctx context.Context, c *Client) error { _, err := c.ListVNFDescriptors(ctx); return err },
			0, ""},
		{"records of 1 KiB (a million in 1 GiB), not asked for", `[`,
			records(`{"_id": "n", "name": "theirs", "junk": "` + strings.Repeat("x", 990) + `"},`),
			func(ctx context.Context, c *Client) error { _, err := c.ListNSInstances(ctx, "mine"); return err },
			0, ""},
	}
}

// readHostileList has a client made with options read the list, calling sample every 4 MiB
// the NBI writes and once the call returns. It returns what the NBI wrote before the client
// hung up, and the client's error.
func readHostileList(tb testing.TB, list hostileList, sample func(), options ...Option) (int64, error) {
	const (
		hostileBytes = 1 << 30
		sampleEvery  = 4 << 20
	)
	var written int64
	served := make(chan struct{})
	nbi := newFakeNBI(tb, func(w http.ResponseWriter, _ *http.Request) {
		defer close(served)
		w.Header().Set("Content-Type", "application/json")
		n, _ := w.Write([]byte(list.head))
		written = int64(n)
		for written < hostileBytes {
			n, err := w.Write(list.chunk)
			written += int64(n)
			if err != nil {
				return
			}
			if written%sampleEvery < int64(len(list.chunk)) {
				sample()
			}
		}
	})
	client := nbi.client(tb, options...)
	if err := client.Authenticate(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	err := list.call(tb.Context(), client)
	sample()
	<-served // the handler stops when the client hangs up
	return written, err
}

// Whatever the shape of a hostile list, the client stops reading at the first bound it
// reaches. The list's bound is lowered here to keep the test quick; what the default bounds
// (256 MiB for a list) leave the heap is BenchmarkHostileListHeap's to measure.
func TestHostileListsAreReadUpToTheFirstBound(t *testing.T) {
	const (
		listBound = 16 << 20
		// socketSlack is what the server writes past what the client read: socket buffers.
		socketSlack = 64 << 20
	)
	for _, list := range hostileLists() {
		t.Run(list.name, func(t *testing.T) {
			bound, want := list.recordBound, list.want
			if bound == 0 {
				bound, want = listBound, fmt.Sprintf("the answer is larger than %d bytes", listBound)
			}
			written, err := readHostileList(t, list, func() {}, WithMaxResponseBytes(listBound))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v, want %q", err, want)
			}
			if written > bound+socketSlack {
				t.Errorf("the server wrote %d bytes: the client read past its bound of %d", written, bound)
			}
		})
	}
}

// BenchmarkHostileListHeap reads every hostile list with the default bounds (1 or 4 MiB per
// record by kind, 8 times that once decoded, 256 MiB read in all) and reports, as heap-B, the
// most the heap in use grew while one was read. make bench holds it to its target.
func BenchmarkHostileListHeap(b *testing.B) {
	var growth uint64
	for b.Loop() {
		for _, list := range hostileLists() {
			heap := newHeapPeak()
			if _, err := readHostileList(b, list, heap.sample); err == nil {
				b.Fatalf("%s: read without an error", list.name)
			}
			growth = max(growth, heap.growth())
		}
	}
	b.ReportMetric(float64(growth), "heap-B")
}
