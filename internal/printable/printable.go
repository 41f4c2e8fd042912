// Package printable makes text from OSM, Git or a tenant safe to show to a person: in a
// condition, an event, a log line or a terminal, a control character (ESC starting a terminal
// sequence, a carriage return or a backspace rewriting a line, a newline forging one) or an
// invisible formatting character (a bidirectional override) would act instead of being read.
//
// It imports only the standard library, so that every package may use it.
package printable

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String escapes each control or formatting character of s, and each byte that is not UTF-8,
// as Go writes it in a string literal (ESC as \x1b, U+202E as \u202e); the rest is unchanged.
func String(s string) string {
	if !strings.ContainsFunc(s, needsEscape) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case needsEscape(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape tells the characters that act on a display rather than show: controls,
// formatting characters (Cf) and the line and paragraph separators.
func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// Args returns args with every string, error and fmt.Stringer replaced by its String, for a
// format whose own text (its layout, its newlines) is trusted and whose arguments are not.
func Args(args []any) []any {
	safe := make([]any, len(args))
	for i, arg := range args {
		switch value := arg.(type) {
		case string:
			safe[i] = String(value)
		case error:
			safe[i] = String(value.Error())
		case fmt.Stringer:
			safe[i] = String(value.String())
		default:
			safe[i] = arg
		}
	}
	return safe
}

// Strings returns a copy of texts, each made printable by String.
func Strings(texts []string) []string {
	safe := make([]string, len(texts))
	for i, text := range texts {
		safe[i] = String(text)
	}
	return safe
}
