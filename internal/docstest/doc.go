// Package docstest holds the tests that keep the README and docs/ true to themselves: every
// relative link resolves to a file and, with an anchor, to one of its headings; each Ready
// reason is listed once in docs/operations.md's table of conditions. It has no code of its own.
package docstest
