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

// ValidationError holds every problem found in a revision, sorted by file
// then line. Retrying cannot help: the revision or the spec must change.
type ValidationError struct {
	Problems []Problem
}

// Error lists the first 20 problems, separated by "; ", and says how many
// more there are.
func (e *ValidationError) Error() string {
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("invalid revision, %d %s: %s", len(e.Problems), noun, listProblems(e.Problems))
}

// listProblems joins the first 20 problems with "; " and says how many more there are.
func listProblems(problems []Problem) string {
	shown := problems[:min(len(problems), maxProblemsInError)]
	lines := make([]string, 0, len(shown)+1)
	for _, problem := range shown {
		lines = append(lines, problem.String())
	}
	if hidden := len(problems) - len(shown); hidden > 0 {
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
