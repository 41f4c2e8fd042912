package docstest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository's root, two folders above this file.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// pages are the Markdown files a reader follows links between.
func pages(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	return append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"))
}

var (
	// link is a Markdown inline link's target: [text](target).
	link = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// fence opens or closes a code block, whose text holds no links.
	fence = regexp.MustCompile("^\\s*```")
	// heading is a Markdown heading line.
	heading = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	// notInSlug are the characters GitHub drops from a heading's anchor.
	notInSlug = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// slug is the anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes.
func slug(text string) string {
	return strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(text)), ""), " ", "-")
}

// outsideCode are the lines of a page outside its code blocks.
func outsideCode(text string) []string {
	var lines []string
	inCode := false
	for line := range strings.SplitSeq(text, "\n") {
		if fence.MatchString(line) {
			inCode = !inCode
			continue
		}
		if !inCode {
			lines = append(lines, line)
		}
	}
	return lines
}

// anchors are the anchors of a page's headings, a repeated one numbered as GitHub does.
func anchors(text string) []string {
	var list []string
	seen := map[string]int{}
	for _, line := range outsideCode(text) {
		if m := heading.FindStringSubmatch(line); m != nil {
			a := slug(m[1])
			if n := seen[a]; n > 0 {
				list = append(list, fmt.Sprintf("%s-%d", a, n))
			} else {
				list = append(list, a)
			}
			seen[a]++
		}
	}
	return list
}

// TestRelativeLinksResolve: every relative link of the README and docs/ names a file of the
// repository, and an anchor names a heading of that file.
func TestRelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	for _, page := range pages(t, root) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, page)
		for _, line := range outsideCode(string(data)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				file := page
				if path != "" {
					file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				}
				info, err := os.Stat(file)
				if err != nil {
					t.Errorf("%s: the link %q names no file of the repository", name, target)
					continue
				}
				if anchor == "" || info.IsDir() || !strings.HasSuffix(file, ".md") {
					continue
				}
				text, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(anchors(string(text)), anchor) {
					t.Errorf("%s: the link %q names no heading of %s", name, target, filepath.Base(file))
				}
			}
		}
	}
}

// TestEachReadyReasonIsListedOnce: docs/operations.md's table of conditions lists each reason
// of the Ready condition once per state, so that a reader does not find one reason explained
// twice in two ways.
func TestEachReadyReasonIsListedOnce(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := strings.Cut(strings.SplitN(string(data), "## Conditions (kstatus)", 2)[1], "\n## ")
	seen := map[string]bool{}
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 4 || !strings.HasPrefix(line, "| ") {
			continue
		}
		row := cells[0] + " | " + cells[2]
		if seen[row] {
			t.Errorf("docs/operations.md lists %q twice", row)
		}
		seen[row] = true
	}
}

// TestGettingStartedReadsInFiveMinutes: the page for first-time users stays short (about 250
// words a minute, its commands and examples counted) and the README leads to it.
func TestGettingStartedReadsInFiveMinutes(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, "docs", "getting-started.md"))
	if err != nil {
		t.Fatal(err)
	}
	if words := len(strings.Fields(string(page))); words > 5*250 {
		t.Errorf("docs/getting-started.md has %d words, more than five minutes of reading", words)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "](docs/getting-started.md)") {
		t.Error("README.md does not link docs/getting-started.md")
	}
}
