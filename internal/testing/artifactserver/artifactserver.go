// Package artifactserver stands for source-controller's artifact storage in the controller
// tests and the bench: an HTTP server of tarballs that hands out the artifacts a GitRepository's
// status would hold, and the tarballs of a revision's files.
//
// Test harness: no product package may import it.
package artifactserver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Server serves published tarballs by path.
type Server struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	// downloads counts the answers of each path served.
	downloads map[string]int
}

// NewServer starts a Server on loopback; Close stops it.
func NewServer() *Server {
	s := &Server{files: map[string][]byte{}, downloads: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body, ok := s.files[r.URL.Path]
		if ok {
			s.downloads[r.URL.Path]++
		}
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	return s
}

// Publish stores tarball at path and returns the artifact that source-controller would report
// for it: its URL, a revision made of the tarball's SHA-1 and its digest.
func (s *Server) Publish(path string, tarball []byte) *meta.Artifact {
	path = strings.TrimPrefix(path, "/")
	s.mu.Lock()
	s.files["/"+path] = tarball
	s.mu.Unlock()
	return &meta.Artifact{
		Path:           path,
		URL:            s.URL + "/" + path,
		Revision:       fmt.Sprintf("main@sha1:%x", sha1.Sum(tarball)),
		Digest:         fmt.Sprintf("sha256:%x", sha256.Sum256(tarball)),
		LastUpdateTime: metav1.Now(),
	}
}

// Downloads tells how many times the artifact published at path was served.
func (s *Server) Downloads(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads["/"+strings.TrimPrefix(path, "/")]
}

// PublishFiles publishes the tarball of files (TarGz) in the folder dir, named after its
// digest so that each revision has a URL of its own, as in source-controller's storage.
func (s *Server) PublishFiles(dir string, files map[string]string) *meta.Artifact {
	tarball := TarGz(files)
	return s.Publish(fmt.Sprintf("%s/%x.tar.gz", strings.TrimSuffix(dir, "/"), sha256.Sum256(tarball)), tarball)
}

// TarGz packs files (slash path to content) as a source-controller artifact, in path order.
func TarGz(files map[string]string) []byte {
	tarball, err := writeTarGz(files)
	if err != nil {
		panic(err) // writing regular files to memory fails only on a programming error
	}
	return tarball
}

func writeTarGz(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		content := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
