// Package pyjson writes strings as OSM's Python code does with json.dumps (ensure_ascii, the
// default) and with repr(): the NBI stores operation parameters that way and echoes requests
// and values that way in its messages, so both the simulator (to answer alike) and the
// operator (to redact and mask what an answer echoes) need it.
//
// It imports only the standard library, so that both sides (client and simulator) may use it.
package pyjson

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Repr is repr(s): s in single quotes, or in double quotes when it holds a single quote and no
// double quote, with backslashes, the quote, \n, \r and \t escaped, and every character
// Python does not print as \xhh, \uhhhh or \Uhhhhhhhh (invalid UTF-8 as U+FFFD would be).
func Repr(s string) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError || unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

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
