package osmpkg

import (
	"fmt"
	"strings"
)

// Error is returned for a bad package source or tarball.
type Error struct {
	// Package is the package (folder) name; empty when not known.
	Package string
	// File is relative to the package folder; empty means the folder itself.
	File string
	// Line is 1-based when known (YAML syntax errors, descriptor fields), else 0.
	Line int
	// Message says what is wrong, naming the field when there is one.
	Message string
}

// Error renders as "package NAME, file FILE, line N: MESSAGE", leaving out
// the parts that are not known.
func (e *Error) Error() string {
	var where []string
	if e.Package != "" {
		where = append(where, "package "+e.Package)
	}
	if e.File != "" {
		where = append(where, "file "+e.File)
	}
	if e.Line > 0 {
		where = append(where, fmt.Sprintf("line %d", e.Line))
	}
	if len(where) == 0 {
		return e.Message
	}
	return strings.Join(where, ", ") + ": " + e.Message
}

// errorf makes an *Error about a whole package (no file).
func errorf(pkg, format string, args ...any) *Error {
	return &Error{Package: pkg, Message: fmt.Sprintf(format, args...)}
}

// fileErrorf makes an *Error about one file of a package.
func fileErrorf(pkg, file, format string, args ...any) *Error {
	return &Error{Package: pkg, File: file, Message: fmt.Sprintf(format, args...)}
}
