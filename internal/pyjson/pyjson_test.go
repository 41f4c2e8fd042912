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
