package devstack

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
)

// DefaultOCITag is the tag of the artifacts a tenant's OCIRepository follows.
const DefaultOCITag = "latest"

// OCIRegistry is an OCI registry on loopback, go-containerregistry's in-memory one over plain
// HTTP, to which tests push repositories as Flux OCI artifacts for an OCIRepository to pull.
type OCIRegistry struct {
	server *httptest.Server
	// log is the request log the registry owns (StartOCIRegistry of a Stack), if any.
	log io.Closer
}

// StartOCIRegistry starts an OCIRegistry on a free port of 127.0.0.1; it writes a line per
// request to requestLog (nil discards them). Close stops it.
func StartOCIRegistry(requestLog io.Writer) *OCIRegistry {
	if requestLog == nil {
		requestLog = io.Discard
	}
	return &OCIRegistry{server: httptest.NewServer(registry.New(registry.Logger(log.New(requestLog, "", log.LstdFlags))))}
}

// StartOCIRegistry starts an OCIRegistry whose request log is the stack's log logName (which
// must be unique in the stack), among those Logs returns. Close stops it.
func (s *Stack) StartOCIRegistry(logName string) (*OCIRegistry, error) {
	requestLog, err := s.createLog(logName)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(s.progress, "starting the OCI registry %s\n", logName)
	r := StartOCIRegistry(requestLog)
	r.log = requestLog
	return r, nil
}

// createLog creates the log file logName of an in-process server, among those Logs returns; it
// fails if the name is taken.
func (s *Stack) createLog(logName string) (*os.File, error) {
	return os.OpenFile(logPath(s.workDir, logName), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
}

// Close stops the registry; what was pushed is gone.
func (r *OCIRegistry) Close() {
	r.server.Close()
	if r.log != nil {
		_ = r.log.Close()
	}
}

// host is the registry's host:port.
func (r *OCIRegistry) host() string { return strings.TrimPrefix(r.server.URL, "http://") }

// URL returns the oci:// URL of repository, as an OCIRepository's spec.url takes it (with
// spec.insecure: the registry speaks plain HTTP).
func (r *OCIRegistry) URL(repository string) string {
	return "oci://" + r.host() + "/" + repository
}

// PushArtifact pushes files (slash path to content) to repository, tagged tag, as `flux push
// artifact` does (with its library, fluxcd/pkg/oci: Flux's config media type and one
// tar+gzip layer of the files), and returns the revision source-controller gives it:
// "<tag>@sha256:<manifest digest>".
func (r *OCIRegistry) PushArtifact(ctx context.Context, repository, tag string, files map[string]string) (string, error) {
	dir, err := os.MkdirTemp("", "oci-artifact-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	for path, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	client := oci.NewClient([]crane.Option{crane.Insecure})
	pushed, err := client.Push(ctx, r.host()+"/"+repository+":"+tag, dir,
		oci.WithPushMetadata(oci.Metadata{Source: r.URL(repository), Revision: tag}))
	if err != nil {
		return "", err
	}
	digest, err := name.NewDigest(pushed, name.Insecure)
	if err != nil {
		return "", err
	}
	return tag + "@" + digest.DigestStr(), nil
}
