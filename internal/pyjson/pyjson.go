// Package pyjson writes strings as OSM's Python code does with json.dumps (ensure_ascii, the
// default): the NBI stores operation parameters that way and echoes requests that way, so both
// the simulator (to answer alike) and the client (to redact what an answer echoes) need it.
//
// It imports only the standard library, so that both sides (client and simulator) may use it.
package pyjson

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// Quote is json.dumps(s): s in double quotes, with every character outside printable ASCII
// escaped, as \uXXXX (UTF-16 surrogate pairs beyond the BMP) or by its short escape.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			// Python's ESCAPE_ASCII escapes all but ' ' to '~'.
			if r >= ' ' && r <= '~' {
				b.WriteRune(r)
				continue
			}
			for _, unit := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, unit)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
