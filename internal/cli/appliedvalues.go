package cli

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"

	"github.com/osmops/osmops/internal/gitops"
)

// commitDigest is the commit of a Flux Git revision ("main@sha1:<hex>"), SHA-1 or SHA-256.
var commitDigest = regexp.MustCompile(`@sha(?:1|256):([0-9a-f]{40}|[0-9a-f]{64})$`)

// gitDeclared are the Helm values the deployment files of a commit declare in Git, by NS
// instance and "member/kdu": values anyone who reads the repository's history sees.
type gitDeclared map[string]map[string]string

// appliedGitValues reads, from the Git history of the checkout dir, each instance's deployment
// file as it was in the commit of revision (the one the OsmDeployment applied), and returns
// the values that file declares: a running value equal to one of them came from Git, so a diff
// may show it (a value from a Secret never equals what Git declared there, but by chance, and
// then Git shows it already). Nil when dir holds no such commit; an instance whose file was
// not there, or not the same instance, has none.
func appliedGitValues(ctx context.Context, dir, revision string, instances []gitops.NsInstance) gitDeclared {
	match := commitDigest.FindStringSubmatch(revision)
	if match == nil {
		return nil
	}
	declared := gitDeclared{}
	for _, ns := range instances {
		data, err := gitShow(ctx, dir, match[1], ns.Source.File)
		if err != nil {
			continue
		}
		if params := gitops.DeclaredParams(ns.Source.File, data, ns.Name); params != nil {
			declared[ns.Name] = params
		}
	}
	return declared
}

// errFileTooLarge: git show wrote more than a deployment file may hold.
var errFileTooLarge = errors.New("larger than a deployment file may be")

// gitShow is the file (a slash path relative to dir) as commit holds it, at most
// gitops.MaxDeploymentFileBytes: read through git itself, which knows every object store and
// history format a checkout may use, with the plumbing command that prints the blob as it is
// (no textconv filter, no pager).
func gitShow(ctx context.Context, dir, commit, file string) ([]byte, error) {
	out := &boundedBuffer{limit: gitops.MaxDeploymentFileBytes}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "cat-file", "blob", commit+":./"+file)
	cmd.Stdout = out
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// boundedBuffer holds what is written to it up to limit bytes, and refuses more (the writer,
// git, then stops on a broken pipe).
type boundedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, errFileTooLarge
	}
	return b.Buffer.Write(p)
}
