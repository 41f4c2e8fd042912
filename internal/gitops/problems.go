package gitops

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Problem is one thing wrong with a revision, located as precisely as
// possible.
type Problem struct {
	// File is a slash path relative to the artifact root; empty for a
	// problem of the OsmDeployment spec.
	File string
	// Line is 1-based; 0 means unknown.
	Line int
	// Message says what is wrong, naming the field.
	Message string
}

// maxShownRunes bounds the file and the message a Problem shows: they quote the repository,
// whose keys and names may be as long as a tenant likes (a 40,000-character key made one
// error over 32 KiB).
const maxShownRunes = 500

// String renders "file:line: message", "file: message" without a line, or
// just the message without a file, each part at most maxShownRunes long.
func (p Problem) String() string {
	file, message := shorten(p.File), shorten(p.Message)
	switch {
	case file == "":
		return message
	case p.Line == 0:
		return fmt.Sprintf("%s: %s", file, message)
	default:
		return fmt.Sprintf("%s:%d: %s", file, p.Line, message)
	}
}

// shorten cuts text to maxShownRunes runes, marking the cut.
func shorten(text string) string {
	if utf8.RuneCountInString(text) <= maxShownRunes {
		return text
	}
	return string([]rune(text)[:maxShownRunes]) + "…"
}

// maxProblemsInError bounds how many problems ValidationError.Error lists,
// so that a condition message stays readable.
const maxProblemsInError = 20

// MaxProblems bounds the problems a ValidationError keeps, the first in file and line order:
// a hostile revision can make thousands (an unknown field a line), and an invalid revision is
// kept in memory (internal/controller's revision cache) and printed whole by osmops validate.
// The others are only counted (More).
const MaxProblems = 100

// ValidationError holds the problems found in a revision, sorted by file
// then line, at most MaxProblems of them. Retrying cannot help: the revision
// or the spec must change.
type ValidationError struct {
	Problems []Problem
	// More is how many problems were found past the MaxProblems kept.
	More int
	// Parsed is what parsed of the revision, for CheckReferences and CheckOwnReferences to
	// check the references of every file, and every field, that could be read; nil when the
	// revision could not be read at all (its settings, its folder, its variables). Its NS
	// instances may repeat a name or lack a field, and hold no values: it is never applied.
	Parsed *Revision
}

// NewValidationError sorts the problems and keeps the first MaxProblems.
func NewValidationError(problems []Problem) *ValidationError {
	sortProblems(problems)
	kept := min(len(problems), MaxProblems)
	return &ValidationError{Problems: slices.Clip(problems[:kept]), More: len(problems) - kept}
}

// With returns a new ValidationError of e's problems and the others, sorted and bounded as
// NewValidationError does, with e's Parsed; e is not changed (it may be shared: a revision's
// is kept for every OsmDeployment that reads it).
func (e *ValidationError) With(others []Problem) *ValidationError {
	merged := NewValidationError(append(slices.Clone(e.Problems), others...))
	// e's problems past the bound came after all it kept, so after all the merge keeps too.
	merged.More += e.More
	merged.Parsed = e.Parsed
	return merged
}

// Count is how many problems were found, kept or not.
func (e *ValidationError) Count() int { return len(e.Problems) + e.More }

// Error lists the first 20 problems, separated by "; ", and says how many
// more there are.
func (e *ValidationError) Error() string {
	noun := "problems"
	if e.Count() == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("invalid revision, %d %s: %s", e.Count(), noun, listProblems(e.Problems, e.More))
}

// listProblems joins the first 20 problems with "; " and says how many more there are, more
// of them counting beside those given.
func listProblems(problems []Problem, more int) string {
	shown := problems[:min(len(problems), maxProblemsInError)]
	lines := make([]string, 0, len(shown)+1)
	for _, problem := range shown {
		lines = append(lines, problem.String())
	}
	if hidden := len(problems) - len(shown) + more; hidden > 0 {
		lines = append(lines, fmt.Sprintf("and %d more", hidden))
	}
	return strings.Join(lines, "; ")
}

// sortProblems orders problems by file, line, then message, so that the
// same revision always gives the same error text.
func sortProblems(problems []Problem) {
	slices.SortFunc(problems, func(a, b Problem) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// problemf makes a Problem.
func problemf(file string, line int, format string, args ...any) Problem {
	return Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...)}
}
