package printable

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain é 密 😀":                "plain é 密 😀",
		"ns-\x1b[2K\r✔ no change":    `ns-\x1b[2K\x0d✔ no change`,
		"two\nlines\ttab\x7f":        `two\x0alines\x09tab\x7f`,
		"bidi \u202egnp.exe":         `bidi \u202egnp.exe`,
		"sep\u2028x":                 `sep\u2028x`,
		"bad \xff byte":              `bad \xff byte`,
		`a literal \x1b stays as is`: `a literal \x1b stays as is`,
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
