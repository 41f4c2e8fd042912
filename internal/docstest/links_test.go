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

// TestTheMapNamesWhatExists: every Go identifier docs/architecture.md names in backticks
// (a camelCase name, or pkg.Name) is a word of the code, and the README's layout table names
// every folder of internal/: a renamed function or a new package shows here, not to a
// newcomer reading a map of code that is gone. Names of the peers' code it compares with are
// listed as such.
func TestTheMapNamesWhatExists(t *testing.T) {
	root := repoRoot(t)
	words := map[string]bool{}
	identifier := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	err := filepath.WalkDir(root, func(path string, entry os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case entry.IsDir() && strings.HasPrefix(entry.Name(), ".") && path != root:
			return filepath.SkipDir
		case entry.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		data, err := os.ReadFile(path)
		for _, word := range identifier.FindAllString(string(data), -1) {
			words[word] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	peers := map[string]bool{"ComputeReconcileResult": true} // source-controller's
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`((?:[a-z][a-z0-9]*\\.)?[A-Za-z_][A-Za-z0-9_]*)(?:\\(\\))?`")
	goName := regexp.MustCompile(`[a-z][A-Z]|^[A-Z][a-z0-9]+[A-Z]|\.`)
	for _, m := range named.FindAllStringSubmatch(string(doc), -1) {
		name := m[1]
		ident := name[strings.LastIndex(name, ".")+1:]
		if goName.MatchString(name) && !words[ident] && !peers[ident] {
			t.Errorf("docs/architecture.md names %s, which no Go file holds", name)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	folders, err := os.ReadDir(filepath.Join(root, "internal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, folder := range folders {
		if folder.IsDir() && !strings.Contains(string(readme), "| `internal/"+folder.Name()+"` |") {
			t.Errorf("the README's layout table does not list internal/%s", folder.Name())
		}
	}
}

// TestTheREADMEsTestCommandIsCIs: the README's full test command runs the make targets
// .ci/run runs, in its order, so that a green run of the one is a green run of the other.
func TestTheREADMEsTestCommandIsCIs(t *testing.T) {
	root := repoRoot(t)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, m := range regexp.MustCompile(`(?m)^make ([a-z0-9-]+)\s*$`).FindAllStringSubmatch(string(ci), -1) {
		targets = append(targets, m[1])
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "`make " + strings.Join(targets, " ") + "`"
	if len(targets) == 0 || !strings.Contains(string(readme), "| **run the whole test suite**") ||
		!regexp.MustCompile(`\| \*\*run the whole test suite\*\*[^\n]*\| `+regexp.QuoteMeta(want)+` \|`).Match(readme) {
		t.Errorf("the README's test command is not %s, the make targets of .ci/run", want)
	}
}
