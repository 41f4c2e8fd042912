// Package artifact downloads the tar.gz artifact that Flux's
// source-controller makes of a Git revision, verifies its digest and unpacks
// it under strict limits, so that a hostile or broken repository cannot write
// outside the target folder or exhaust the operator's disk.
//
// Why not github.com/fluxcd/pkg/http/fetch and github.com/fluxcd/pkg/tar,
// which Flux's kustomize-controller uses (checked at fetch v0.25.0 and tar
// v1.2.0, which declare Go 1.26; fetch v0.30.0 and tar v1.3.0 need Go 1.27):
//   - fetch does not build in this module without a replace directive that
//     pins github.com/opencontainers/go-digest to an untagged commit (its
//     blake3 import needs digest.RegisterAlgorithm); it uses its own
//     retrying client (5-30 s waits inside the call, blocking a worker)
//     instead of the caller's *http.Client; and its HTTP error message
//     prints the full artifact URL, user info included.
//   - tar.Untar skips instead of refusing: a hard link becomes an empty
//     regular file, symlinks are either all refused or all dropped (no
//     "keep those that stay inside"), and it has no bound on the number of
//     files and no typed errors.
//
// So this package keeps the same shape (download to a temporary file with a
// size bound, verify, untar) with the standard library and go-digest.
//
// It imports no other osmops package and nothing of Kubernetes: it gets a URL and a digest, and
// gives back a folder.
package artifact

import (
	"context"
	_ "crypto/sha256" // registers sha256 for go-digest
	_ "crypto/sha512" // registers sha384 and sha512 for go-digest
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/opencontainers/go-digest"
)

// Default limits, used for the zero fields of Limits.
const (
	DefaultMaxDownloadBytes int64 = 100 << 20
	DefaultMaxUnpackedBytes int64 = 500 << 20
	DefaultMaxFiles               = 20000
)

// Limits bound what Fetch accepts; a zero (or negative) field takes its
// default.
type Limits struct {
	// MaxDownloadBytes bounds the compressed artifact.
	MaxDownloadBytes int64
	// MaxUnpackedBytes bounds the total size of the unpacked files.
	MaxUnpackedBytes int64
	// MaxFiles bounds the number of tar entries, and the number of files, folders and symlinks
	// they make, the parent folders their paths imply included.
	MaxFiles int
}

// withDefaults fills the unset fields of l.
func (l Limits) withDefaults() Limits {
	if l.MaxDownloadBytes <= 0 {
		l.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	if l.MaxUnpackedBytes <= 0 {
		l.MaxUnpackedBytes = DefaultMaxUnpackedBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// Fetch downloads the artifact at artifactURL (Flux's status.artifact.url)
// with httpClient (http.DefaultClient when nil), verifies it against
// expectedDigest ("sha256:<hex>", or sha384/sha512) and unpacks it into dir,
// which must exist and be empty. The download is kept in a temporary file
// next to dir until it has been unpacked.
//
// Errors that blame the artifact wrap ErrInvalidArtifact: a retry of the same
// artifact cannot help. Any other error may pass (source-controller answers 404
// while it replaces a garbage-collected artifact, for one). No error shows the URL's user info or query.
// When Fetch fails, dir may hold part of the artifact: the caller should
// remove it.
func Fetch(ctx context.Context, httpClient *http.Client, artifactURL, expectedDigest, dir string, limits Limits) error {
	limits = limits.withDefaults()
	expected, err := digest.Parse(expectedDigest)
	if err != nil {
		return invalidf("digest %q: %v", expectedDigest, err)
	}
	u, err := url.Parse(artifactURL)
	if err != nil {
		// url.Parse's error repeats the whole URL, credentials included.
		return invalidf("the artifact URL cannot be parsed")
	}
	if err := checkEmptyDir(dir); err != nil {
		return err
	}
	if httpClient == nil {
		httpClient = http.DefaultClient
	}

	download, err := os.CreateTemp(filepath.Dir(dir), ".artifact-*.tar.gz")
	if err != nil {
		return fmt.Errorf("creating the download file: %w", err)
	}
	defer func() {
		_ = download.Close()
		_ = os.Remove(download.Name())
	}()

	if err := downloadVerified(ctx, httpClient, u, expected, download, limits.MaxDownloadBytes); err != nil {
		return err
	}
	if _, err := download.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewinding the download file: %w", err)
	}
	return untar(ctx, download, dir, limits)
}

// checkEmptyDir makes sure that dir is an existing, empty folder, so that
// nothing already there can be mistaken for part of the artifact.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("the unpack folder: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("the unpack folder %s is not empty", dir)
	}
	return nil
}

// downloadVerified writes the body of a GET of u into out, refusing more
// than maxBytes, and checks that it has the expected digest.
func downloadVerified(ctx context.Context, client *http.Client, u *url.URL, expected digest.Digest, out io.Writer, maxBytes int64) error {
	shownURL := redactURL(u)
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return invalidf("artifact URL %s: %v", shownURL, unwrapURLError(err))
	}
	response, err := client.Do(request)
	if err != nil {
		return fmt.Errorf("downloading artifact %s: %w", shownURL, unwrapURLError(err))
	}
	defer func() { _ = response.Body.Close() }()
	if response.StatusCode != http.StatusOK {
		return &HTTPError{StatusCode: response.StatusCode, Status: response.Status, URL: shownURL}
	}
	if response.ContentLength > maxBytes {
		return invalidf("artifact %s is %d bytes, over the limit of %d bytes", shownURL, response.ContentLength, maxBytes)
	}

	digester := expected.Algorithm().Digester()
	// Read one byte more than allowed: the Content-Length may be absent or lie.
	written, err := io.Copy(io.MultiWriter(out, digester.Hash()), io.LimitReader(response.Body, maxBytes+1))
	if err != nil {
		return fmt.Errorf("downloading artifact %s: %w", shownURL, unwrapURLError(err))
	}
	if written > maxBytes {
		return invalidf("artifact %s is larger than the limit of %d bytes", shownURL, maxBytes)
	}
	if actual := digester.Digest(); actual != expected {
		return invalidf("artifact %s has digest %s, expected %s", shownURL, actual, expected)
	}
	return nil
}

// unwrapURLError drops the *url.Error layer, whose message repeats the URL
// with its user name and query, and keeps the cause (which errors.Is can
// still match, e.g. context.Canceled).
func unwrapURLError(err error) error {
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		return urlErr.Err
	}
	return err
}
