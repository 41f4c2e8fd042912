package osm

import (
	"bytes"
	"context"
	"encoding/json"
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

// A hostile NBI streams 1 GiB as the answer to a list, without Content-Length, generated as it
// is written. Whatever its shape, the client stops reading at the first bound it reaches, and
// the heap in use stays under 64 MiB above what it was before (sampled every 4 MiB written and
// once the call returns). The default bounds are at work: 1 or 4 MiB per record by kind, 8
// times that once decoded, 256 MiB read in all. Records kept are few here, or dropped as not
// asked for: what records kept take is bounded by WithMaxResponseBytes (256 MiB by default,
// see TestAnswersAreBoundedPerRecordAndInAll). The race detector leaves out the shapes that
// read 256 MiB.
func TestA1GiBHostileListKeepsTheHeapUnder64MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1.5 GiB in all")
	}
	const (
		hostileBytes  = 1 << 30
		maxHeapGrowth = 64 << 20
		sampleEvery   = 4 << 20
		chunkBytes    = 1 << 20
		// socketSlack is what the server writes past what the client read: socket buffers.
		socketSlack = 64 << 20
	)
	// records repeats one record to about a chunk's size.
	records := func(record string) []byte {
		return bytes.Repeat([]byte(record), chunkBytes/len(record))
	}
	tests := []struct {
		name  string
		head  string
		chunk []byte
		call  func(context.Context, *Client) error
		want  string
		// readBound is the bound at which the client stops.
		readBound int64
	}{
		{"one record, in a field not read", `[{"_id": "a", "junk": "`, bytes.Repeat([]byte("x"), chunkBytes),
			func(ctx context.Context, c *Client) error { _, err := c.ListVNFDescriptors(ctx); return err },
			"an item of the answer is larger than 1048576 bytes", maxDescriptorRecordBytes},
		{"one record, in a field kept", `[{"_id": "a", "name": "`, bytes.Repeat([]byte("x"), chunkBytes),
			func(ctx context.Context, c *Client) error { _, err := c.ListNSInstances(ctx); return err },
			"an item of the answer is larger than 4194304 bytes", maxValuesRecordBytes},
		{"white space in a list", `[`, bytes.Repeat([]byte(" \n"), chunkBytes/2),
			func(ctx context.Context, c *Client) error { _, err := c.ListOperations(ctx, ""); return err },
			"an item of the answer is larger than 4194304 bytes", maxValuesRecordBytes},
		{"records of 1 MiB that decoded would take 45 times that", `[`,
			[]byte(`{"_id": "o", "operationParams": {"x": [` + strings.Repeat(`{"a":1},`, chunkBytes/8-8) + `{}]}},`),
			func(ctx context.Context, c *Client) error { _, err := c.ListOperations(ctx, ""); return err },
			"an item of the answer would take more than 33554432 bytes of memory decoded", maxValuesRecordBytes},
		{"records of 16 KiB, in a field not read", `[`,
			records(`{"_id": "d", "id": "vnfd", "junk": "` + strings.Repeat("x", 16<<10) + `"},`),
			func(ctx context.Context, c *Client) error { _, err := c.ListVNFDescriptors(ctx); return err },
			"the answer is larger than 268435456 bytes", DefaultMaxResponseBytes},
		{"records of 1 KiB (a million in 1 GiB), not asked for", `[`,
			records(`{"_id": "n", "name": "theirs", "junk": "` + strings.Repeat("x", 990) + `"},`),
			func(ctx context.Context, c *Client) error { _, err := c.ListNSInstances(ctx, "mine"); return err },
			"the answer is larger than 268435456 bytes", DefaultMaxResponseBytes},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			if raceEnabled && test.readBound == DefaultMaxResponseBytes {
				t.Skip("reads 256 MiB, which takes longer than the client's timeout under the race detector")
			}
			heap := newHeapPeak()
			var written int64
			served := make(chan struct{})
			nbi := newFakeNBI(t, func(w http.ResponseWriter, _ *http.Request) {
				defer close(served)
				w.Header().Set("Content-Type", "application/json")
				n, _ := w.Write([]byte(test.head))
				written = int64(n)
				for written < hostileBytes {
					n, err := w.Write(test.chunk)
					written += int64(n)
					if err != nil {
						return
					}
					if written%sampleEvery < int64(len(test.chunk)) {
						heap.sample()
					}
				}
			})
			client := nbi.client(t)
			if err := client.Authenticate(t.Context()); err != nil {
				t.Fatal(err)
			}
			err := test.call(t.Context(), client)
			heap.sample()
			<-served // the handler stops when the client hangs up
			t.Logf("read until %v; server wrote %d MiB; heap in use grew by %.1f MiB at most",
				err, written>>20, float64(heap.growth())/(1<<20))
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Errorf("got %v, want %q", err, test.want)
			}
			if written > test.readBound+socketSlack {
				t.Errorf("the server wrote %d bytes: the client read past its bound of %d", written, test.readBound)
			}
			if heap.growth() > maxHeapGrowth {
				t.Errorf("the heap in use grew by %d bytes, more than %d", heap.growth(), maxHeapGrowth)
			}
		})
	}
}
