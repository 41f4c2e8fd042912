package pyjson

import "testing"

// The expectations are what Python 3's json.dumps prints.
func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        `"plain"`,
		`q"b\`:         `"q\"b\\"`,
		"t\tn\nr\r":    `"t\tn\nr\r"`,
		"\b\f\x01\x7f": `"\b\f\u0001\u007f"`,
		"é密":           `"\u00e9\u5bc6"`,
		"😀":            `"\ud83d\ude00"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestRepr: repr() as CPython 3 prints these strings.
func TestRepr(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        `'plain'`,
		"it's":         `"it's"`,
		`it's "q"`:     `'it\'s "q"'`,
		"a\\b\n\t\r":   `'a\\b\n\t\r'`,
		"\x1b[31m\x7f": `'\x1b[31m\x7f'`,
		"é密\u00a0":     `'é密\xa0'`,
		"\u202e\u2028": `'\u202e\u2028'`,
		"\U000e0001":   `'\U000e0001'`,
	} {
		if got := Repr(in); got != want {
			t.Errorf("Repr(%q) = %s, want %s", in, got, want)
		}
	}
}
