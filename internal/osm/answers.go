package osm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// An NBI is tenant-controlled: its numbers are read through answerTime, answerDuration and
// answerCount, which keep them within a stated range, so that no answer can make a conversion
// overflow nor a status write fail (docs/reliability.md, "NBI answers out of range").

// latestAnswerTime is the last second a time read from an answer may be: the end of 9999, the
// last year RFC 3339 writes, hence the last a metav1.Time in a status may hold (the API server
// refuses every status write that holds a later one).
var latestAnswerTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// answerTime reads seconds since the Unix epoch, as OSM writes times, from an answer: after
// 1970 and at most latestAnswerTime. Zero is a time OSM did not write, the zero time. Any other
// number (negative, NaN, infinite, beyond 9999) is dropped: the zero time, and ok false.
func answerTime(seconds Number) (at time.Time, ok bool) {
	s := float64(seconds)
	if s == 0 {
		return time.Time{}, true
	}
	// Written so that NaN is out of range too.
	if !(s > 0 && s < float64(latestAnswerTime.Unix()+1)) {
		return time.Time{}, false
	}
	whole, fraction := math.Modf(s)
	return time.Unix(int64(whole), int64(fraction*1e9)).UTC(), true
}

// answerDuration reads seconds from an answer as a duration within [shortest, longest]: one
// outside is clamped, NaN is shortest; ok is false when it was clamped. The bounds are
// compared before the conversion, which would overflow beyond 292 years.
func answerDuration(seconds float64, shortest, longest time.Duration) (d time.Duration, ok bool) {
	switch {
	case !(seconds >= shortest.Seconds()):
		return shortest, false
	case seconds > longest.Seconds():
		return longest, false
	}
	return time.Duration(seconds * float64(time.Second)), true
}

// answerCount reads a count from an answer (a quota, a revision): its whole part within
// [0, limit], one outside clamped, NaN 0. The bounds are compared before the conversion to
// int, which is not defined for a number beyond it.
func answerCount(n Number, limit int) int {
	switch c := float64(n); {
	case !(c >= 0):
		return 0
	case c > float64(limit):
		return limit
	default:
		return int(c)
	}
}

// OutOfRangeMessage is the message of the log line of a number of an answer dropped or
// clamped. The line names the field and what osmops read instead, never the number: an NBI
// that echoes a request could have put a secret there (see jsonError).
const OutOfRangeMessage = "an NBI answer holds a number out of range"

// warnOutOfRange logs that field of the answer to req was out of range, and what was read.
func (c *Client) warnOutOfRange(ctx context.Context, req request, field, readAs string) {
	log.FromContext(ctx).Info(OutOfRangeMessage, "request", req.method+" "+c.displayPath(req), "field", field, "readAs", readAs)
}

// MaxIDBytes bounds an id read from an NBI answer: a record's _id, the id a create or an action
// returns, the ids a record refers to (nsInstanceId, nsr-id-ref, vim-account-id...). OSM's ids
// are UUIDs, 36 bytes (Keystone's project ids 32 hexadecimal digits); the operator writes them
// into status (status.inventory[].id, status.operations[].id, status.history[].operations[].id,
// a thousand instances each), keys what it tracks on them and puts them into request paths. An
// NBI is the tenant's to write: without a bound one id of 1 MiB would make its own
// OsmDeployment's status larger than the API server stores (1.5 MiB), and every status write
// fail; a control character would reach that status as it came. The enumerated values OSM
// writes (operationState, lcmOperationType, nsState), words of at most 20 bytes, keep to the
// same rule: operationState is written into status.operations[].state and the history. They are
// refused rather than cut: a value cut is no state OSM writes either (an operation in it would
// read as never ending, polled for ever, with a made-up state in the status), and a refusal says
// in Ready what the NBI did.
const MaxIDBytes = 64

// answerID says why value, read from an answer, is not an id (nor an enumerated value): more
// than MaxIDBytes, or a byte that is not printable ASCII or is a space. "" is no id, which
// passes: the caller decides what a record without one is. The reason tells the length, never
// the bytes: an NBI that echoes a request could have put a secret there.
func answerID(value string) (reason string, ok bool) {
	if len(value) > MaxIDBytes {
		return fmt.Sprintf("%d bytes, more than %d", len(value), MaxIDBytes), false
	}
	for i := range len(value) {
		if c := value[i]; c <= ' ' || c > '~' {
			return fmt.Sprintf("%d bytes, not all printable ASCII without spaces", len(value)), false
		}
	}
	return "", true
}

// answerField is a field of an answer that answerID checks: its JSON path, its value, and
// whether it is an enumerated value rather than an id.
type answerField struct {
	path, value string
	enumerated  bool
}

// idField is a field of an answer that holds an id.
func idField(path, value string) answerField { return answerField{path: path, value: value} }

// enumField is a field of an answer that holds one of the values OSM enumerates.
func enumField(path, value string) answerField {
	return answerField{path: path, value: value, enumerated: true}
}

// checkAnswerFields refuses the answer (or the record of a list) one of whose fields is not an
// id, as malformed: a record without a usable id cannot be tracked, and the rest of an answer
// that holds such a field is no better (docs/reliability.md, "NBI answers out of range").
func checkAnswerFields(fields ...answerField) error {
	for _, field := range fields {
		if reason, ok := answerID(field.value); !ok {
			what := "an id"
			if field.enumerated {
				what = "a value OSM writes"
			}
			return fmt.Errorf("its %s is not %s: %s", field.path, what, reason)
		}
	}
	return nil
}

// identified is an answer type with fields that must be ids (answerID), which checkIDs checks as
// the answer, or each record of a list, is decoded.
type identified interface {
	checkIDs() error
}

// checkIDs checks the ids of decoded, when it has some.
func checkIDs(decoded any) error {
	if answer, ok := decoded.(identified); ok {
		return answer.checkIDs()
	}
	return nil
}

func (a *NSInstanceCreated) checkIDs() error {
	return checkAnswerFields(idField("id", a.ID), idField("nslcmop_id", a.OperationID))
}

func (a *idAnswer) checkIDs() error        { return checkAnswerFields(idField("id", a.ID)) }
func (a *operationAnswer) checkIDs() error { return checkAnswerFields(idField("id", a.ID)) }
func (a *deletionAnswer) checkIDs() error  { return checkAnswerFields(idField("_id", a.ID)) }

// UnmarshalJSON reads a deletion answer and checks its id: DeleteNSInstance decodes it itself,
// not through oneObject.
func (a *deletionAnswer) UnmarshalJSON(data []byte) error {
	type plain deletionAnswer
	if err := json.Unmarshal(data, (*plain)(a)); err != nil {
		return err
	}
	return a.checkIDs()
}

// The bounds of one record, alone or in a list, by kind. Real ones are far smaller; a larger
// one is an NBI filling the operator's memory. Records that carry KDU values (an NS record's
// instantiate_params, a VNF record's kdur, an operation's operationParams) get room for the
// values of the largest deployment file osmops reads (1 MiB of YAML), which OSM may store as
// a JSON string escaped once more.
const (
	// maxValuesRecordBytes bounds an NS record, a VNF record, an LCM operation: several KiB each.
	maxValuesRecordBytes = 4 << 20
	// maxDescriptorRecordBytes bounds an NSD, a VNFD (tens of KiB with many KDUs), a VIM account.
	maxDescriptorRecordBytes = 1 << 20
)

// maxRecordBytes is the bound of one record of record's kind; other answers (a login, the
// version, the ids a write returns) are small by nature.
func maxRecordBytes(record any) int64 {
	switch record.(type) {
	case *NSInstance, *VNFInstance, *Operation:
		return maxValuesRecordBytes
	case *NSDescriptor, *VNFDescriptor, *VIMAccount:
		return maxDescriptorRecordBytes
	}
	return maxSmallAnswerBytes
}

// Decoded, a few bytes of JSON can take hundreds: "{}" is a map, "0," in a list of any is an
// interface and a boxed number, "{}," in a list of records is a record. So a record within its
// bound of bytes could take hundreds of MiB once decoded (223 MiB for 4 MiB of {"a":1} in an
// operation's operationParams). Before a record is decoded, decodingCost estimates that from
// its text, from above, and a record that may take more than maxDecodingGrowth times its
// bound is refused. The estimate of OSM's records (testdata) is 4 to 6 times their size.
const (
	maxDecodingGrowth = 8
	// containerCost is a map's header and first table (measured: 330 bytes for {"a":1} in a
	// list of any); elementCost is a slot of a large map's table with its key and boxed value
	// (measured: 97 bytes in a map of 1,000 numbers).
	containerCost = 320
	elementCost   = 96
)

// decodingCost estimates from above the memory decoding text as JSON may take: its bytes,
// and for each object or list and each element after the first, the most encoding/json makes
// of them (in a map[string]any or []any).
func decodingCost(text []byte) int64 {
	cost := int64(len(text))
	inString, escaped := false, false
	for _, c := range text {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			cost += containerCost
		case c == ',':
			cost += elementCost
		}
	}
	return cost
}

// checkDecodingCost refuses to decode text, what (the answer, an item of it) whose bound is
// maxBytes, when it may take more than maxDecodingGrowth times that in memory.
func checkDecodingCost(what string, text []byte, maxBytes int64) error {
	if limit := maxDecodingGrowth * maxBytes; decodingCost(text) > limit {
		return fmt.Errorf("%s would take more than %d bytes of memory decoded", what, limit)
	}
	return nil
}

// answerReading says how a 2xx answer is read.
type answerReading struct {
	// maxBytes bounds the body: an answer announced larger is not read, one found larger is
	// refused. The Client's maxResponseBytes caps it too.
	maxBytes int64
	// read decodes the body.
	read func(status int, body *answerBody) error
	// decoded is what read decodes into, for the audit line of a change (auditedAnswer).
	decoded any
}

// oneObject reads a whole answer, at most maxBytes, and decodes its JSON into out unless out
// is nil, then checks its ids (checkIDs).
func oneObject(maxBytes int64, out any) answerReading {
	return answerReading{maxBytes: maxBytes, decoded: out, read: func(status int, body *answerBody) error {
		data, err := io.ReadAll(body)
		if err != nil || out == nil {
			return err
		}
		if err := checkDecodingCost("the answer", data, body.maxBytes); err != nil {
			return err
		}
		if err := json.Unmarshal(data, out); err != nil {
			return body.jsonError(status, err)
		}
		return body.jsonError(status, checkIDs(out))
	}}
}

// listOf reads a JSON list into out one record at a time and keeps the records keep accepts
// (all when keep is nil).
// The records kept are spent from budget (none when nil).
func listOf[T any](maxBytes int64, keep func(*T) bool, budget *MemoryBudget, out *[]T) answerReading {
	return answerReading{maxBytes: maxBytes, read: func(status int, body *answerBody) (err error) {
		*out, err = decodeList(status, body, keep, budget)
		return err
	}}
}

// decodeList decodes a list without ever holding its text whole: json.Decoder buffers one
// record at a time, which the body bounds (maxRecordBytes), each record is checked for what
// decoding it may take (checkDecodingCost) and for its ids (checkIDs), and the records kept
// are counted, as held in memory, against the bound of the whole answer and what is left of
// the budget.
func decodeList[T any](status int, body *answerBody, keep func(*T) bool, budget *MemoryBudget) ([]T, error) {
	maxHeld := budget.available(body.maxBytes)
	body.maxItemBytes = min(maxRecordBytes(new(T)), body.maxBytes)
	decoder := json.NewDecoder(body)
	start, err := decoder.Token()
	switch {
	case err != nil:
		return nil, body.jsonError(status, err)
	case start == nil:
		// null: no list, as encoding/json reads it.
		return nil, body.end(status, decoder)
	case start != json.Delim('['):
		return nil, body.jsonError(status, &json.UnmarshalTypeError{Value: jsonKind(start), Type: reflect.TypeFor[[]T]()})
	}
	items := []T{}
	recordSize := int64(reflect.TypeFor[T]().Size())
	var referenced int64
	// Reused, so that a flood of records dropped costs no allocation each.
	var item T
	var text json.RawMessage
	// index counts the records read, from 1, for an error to name the one refused.
	index := 0
	for {
		body.itemStart = decoder.InputOffset()
		if !decoder.More() {
			break
		}
		if err := decoder.Decode(&text); err != nil {
			return nil, body.jsonError(status, err)
		}
		if err := checkDecodingCost("an item of the answer", text, body.maxItemBytes); err != nil {
			return nil, err
		}
		item = *new(T)
		if err := json.Unmarshal(text, &item); err != nil {
			return nil, body.jsonError(status, err)
		}
		// Before keep: a record whose id is not one must not look like a record not asked for
		// (a missing operation reads as a completed one), as listMembers keeps those without.
		index++
		if err := checkIDs(&item); err != nil {
			return nil, body.jsonError(status, fmt.Errorf("item %d: %w", index, err))
		}
		if keep != nil && !keep(&item) {
			continue
		}
		items = append(items, item)
		referenced += referencedBytes(reflect.ValueOf(item))
		if held := int64(cap(items))*recordSize + referenced; held > maxHeld {
			if maxHeld < body.maxBytes {
				return nil, budget.exceeded()
			}
			return nil, fmt.Errorf("the records of the answer take more than %d bytes of memory", body.maxBytes)
		}
	}
	if _, err := decoder.Token(); err != nil { // the closing bracket
		return nil, body.jsonError(status, err)
	}
	if err := body.end(status, decoder); err != nil {
		return nil, err
	}
	return items, budget.spend(int64(cap(items))*recordSize + referenced)
}

// jsonKind names the kind of a JSON value by its first token, as encoding/json's errors do.
func jsonKind(token json.Token) string {
	switch token.(type) {
	case json.Delim:
		return "object"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return "number"
}

// mapHeaderBytes is about the size of a Go map's header.
const mapHeaderBytes = 48

// referencedBytes estimates the memory a decoded value refers to beyond its own size: the
// bytes of its strings, the arrays of its slices, the tables of its maps, what its interfaces
// and pointers hold.
func referencedBytes(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		for i := range v.Len() {
			n += referencedBytes(v.Index(i))
		}
		return n
	case reflect.Struct:
		var n int64
		for _, field := range v.Fields() {
			n += referencedBytes(field)
		}
		return n
	case reflect.Map:
		// A table's slots come by groups of 8, each with a control byte; it grows past 7/8 full.
		slots := 0
		for slots*7/8 < v.Len() {
			slots = max(8, 2*slots)
		}
		n := mapHeaderBytes + int64(slots)*int64(v.Type().Key().Size()+v.Type().Elem().Size()+1)
		for entry := v.MapRange(); entry.Next(); {
			n += referencedBytes(entry.Key()) + referencedBytes(entry.Value())
		}
		return n
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int64(v.Elem().Type().Size()) + referencedBytes(v.Elem())
	}
	return 0
}

// answerBody is the body of a 2xx answer as its decoder reads it. It counts the bytes read
// and fails a read past the bound of the whole answer or, in a list, of one record: since
// json.Decoder buffers a whole record before it decodes it, its buffer grows no larger.
type answerBody struct {
	reader   io.Reader
	read     int64
	maxBytes int64
	// itemStart is where the record being read starts; maxItemBytes bounds it (0: no bound).
	itemStart, maxItemBytes int64
	// failure is why a read failed: a bound, or the connection.
	failure error
	// connectionError is the connection's failure, which a retry may not meet again.
	connectionError error
}

// Read reads at most one byte past a bound, to tell an answer that ends at the bound from
// one that goes on.
func (b *answerBody) Read(p []byte) (int, error) {
	if b.failure != nil {
		return 0, b.failure
	}
	end := b.maxBytes
	if b.maxItemBytes > 0 {
		end = min(end, b.itemStart+b.maxItemBytes)
	}
	if room := end + 1 - b.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.reader.Read(p)
	b.read += int64(n)
	switch {
	case err != nil && err != io.EOF:
		b.connectionError, b.failure = err, err
	case b.read > b.maxBytes:
		b.failure = fmt.Errorf("the answer is larger than %d bytes", b.maxBytes)
	case b.maxItemBytes > 0 && b.read-b.itemStart > b.maxItemBytes:
		b.failure = fmt.Errorf("an item of the answer is larger than %d bytes", b.maxItemBytes)
	}
	if b.failure != nil {
		return n, b.failure
	}
	return n, err
}

// jsonError says why the answer's JSON could not be decoded: a failed read as it is, anything
// else as JSON that is not what was expected. Numbers are not quoted: an NBI that echoes a
// request could put a secret there.
func (b *answerBody) jsonError(status int, err error) error {
	switch {
	case err == nil:
		return nil
	case b.failure != nil:
		return b.failure
	case err == io.EOF:
		err = io.ErrUnexpectedEOF
	}
	var typeError *json.UnmarshalTypeError
	if errors.As(err, &typeError) && strings.HasPrefix(typeError.Value, "number ") {
		unquoted := *typeError
		unquoted.Value = "number"
		err = &unquoted
	}
	return fmt.Errorf("the %d answer is not the JSON expected: %w", status, err)
}

// end checks that nothing but white space follows the answer's JSON value, as
// encoding/json.Unmarshal does.
func (b *answerBody) end(status int, decoder *json.Decoder) error {
	_, err := decoder.Token()
	switch err {
	case io.EOF:
		return nil
	case nil:
		err = errors.New("more follows the JSON value")
	}
	return b.jsonError(status, err)
}
