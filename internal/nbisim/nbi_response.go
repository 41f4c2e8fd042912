package nbisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The NBI renders every answer with json.dumps(data, indent=4) + "\n". The
// simulator does the same so that byte counts, which the benchmarks compare,
// are those of the real thing.

const indentUnit = "    "

// doc is one record's JSON as it appears inside a list answer: indented by
// one level. Records keep their doc and re-render it only when they change,
// so that listing ten thousand NS instances is a concatenation.
type doc []byte

// renderDoc renders a record for use in lists.
func renderDoc(v any) doc {
	return doc(bytes.TrimSuffix(encodeJSON(v, indentUnit), []byte("\n")))
}

// standalone renders the record as a whole answer, one level less indented.
func (d doc) standalone() []byte {
	out := bytes.ReplaceAll(d, []byte("\n"+indentUnit), []byte("\n"))
	return append(out, '\n')
}

// The NSD is most of an NS record and the same in every instance of it, so
// it is indented once, for its place in the record, and spliced into each
// record's doc rather than re-encoded with every change of every record:
// this keeps completing or listing ten thousand operations fast.

// nsdMember is the NS record's "nsd" member as renderDoc writes it with a
// null value. A JSON string cannot hold a raw newline, so the first match
// is the member itself.
var nsdMember = []byte("\n" + indentUnit + indentUnit + `"nsd": null`)

// renderNested renders a value to sit as a member of a listed record.
func renderNested(v any) []byte {
	return bytes.TrimSuffix(encodeJSON(v, indentUnit+indentUnit), []byte("\n"))
}

// spliceNSD puts nsd, rendered by renderNested, in place of the null of
// the "nsd" member of an NS record's doc.
func spliceNSD(d doc, nsd []byte) doc {
	at := bytes.Index(d, nsdMember)
	if at < 0 {
		panic("nbisim: an NS record has no nsd member")
	}
	valueAt := at + len(nsdMember) - len("null")
	spliced := make(doc, 0, len(d)+len(nsd))
	spliced = append(spliced, d[:valueAt]...)
	spliced = append(spliced, nsd...)
	return append(spliced, d[valueAt+len("null"):]...)
}

// encodeJSON renders v like json.dumps(v, indent=4) + "\n": four-space
// indentation and no HTML escaping. The values rendered here are the
// simulator's own records, which always encode; a failure is a bug.
func encodeJSON(v any, prefix string) []byte {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	encoder.SetIndent(prefix, indentUnit)
	if err := encoder.Encode(v); err != nil {
		panic(fmt.Sprintf("nbisim: cannot render %T: %v", v, err))
	}
	return b.Bytes()
}

// response is what a handler answers; the body is a list of byte slices so
// that cached record docs are written without copying.
type response struct {
	status      int
	contentType string
	header      http.Header
	body        [][]byte
}

const jsonContentType = "application/json; charset=utf-8"

func jsonResponse(status int, v any) response {
	return response{status: status, contentType: jsonContentType, body: [][]byte{encodeJSON(v, "")}}
}

func docResponse(d doc) response {
	return response{status: http.StatusOK, contentType: jsonContentType, body: [][]byte{d.standalone()}}
}

// listResponse renders docs as a JSON array the way json.dumps does.
func listResponse(docs []doc) response {
	if len(docs) == 0 {
		return response{status: http.StatusOK, contentType: jsonContentType, body: [][]byte{[]byte("[]\n")}}
	}
	body := make([][]byte, 0, 2*len(docs)+1)
	for i, d := range docs {
		if i == 0 {
			body = append(body, []byte("[\n"+indentUnit))
		} else {
			body = append(body, []byte(",\n"+indentUnit))
		}
		body = append(body, d)
	}
	body = append(body, []byte("\n]\n"))
	return response{status: http.StatusOK, contentType: jsonContentType, body: body}
}

func noContent() response { return response{status: http.StatusNoContent} }

func (r response) withHeader(key, value string) response {
	if r.header == nil {
		r.header = http.Header{}
	}
	r.header.Set(key, value)
	return r
}

// nbiError is an error answer of the NBI: {"code","status","detail"}.
type nbiError struct {
	status int
	detail string
	header http.Header
}

func errorf(status int, format string, args ...any) *nbiError {
	return &nbiError{status: status, detail: fmt.Sprintf(format, args...)}
}

func (e *nbiError) Error() string { return e.detail }

// problemDetails is the NBI's error body, members in its order.
type problemDetails struct {
	Code   string `json:"code"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

func (e *nbiError) response() response {
	r := jsonResponse(e.status, problemDetails{Code: statusName(e.status), Status: e.status, Detail: e.detail})
	r.header = e.header
	return r
}

// statusName is Python's HTTPStatus name, which the NBI puts in "code":
// "Unprocessable Entity" becomes UNPROCESSABLE_ENTITY.
func statusName(status int) string {
	return strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_").Replace(http.StatusText(status)))
}
