package devstack

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3Server is an S3-compatible object store on loopback (gofakes3's in-memory one) over plain
// HTTP and without authentication, like a public MinIO bucket, for a Bucket of provider
// generic to read.
type S3Server struct {
	server *httptest.Server
	log    io.Closer
}

// StartS3Server starts an S3Server whose log is the stack's log name (which must be unique in
// the stack). Close stops it.
func (s *Stack) StartS3Server(name string) (*S3Server, error) {
	requestLog, err := s.createLog(name)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(s.progress, "starting the S3 server %s\n", name)
	handler := gofakes3.New(s3mem.New(), gofakes3.WithLogger(gofakes3.StdLog(log.New(requestLog, "", log.LstdFlags)))).Server()
	return &S3Server{server: httptest.NewServer(handler), log: requestLog}, nil
}

// Close stops the server; what was uploaded is gone.
func (s *S3Server) Close() {
	s.server.Close()
	_ = s.log.Close()
}

// Endpoint returns the server's host:port, as a Bucket's spec.endpoint takes it (with
// spec.insecure: the server speaks plain HTTP).
func (s *S3Server) Endpoint() string { return strings.TrimPrefix(s.server.URL, "http://") }

// Upload writes files (slash path to object content) into bucket, created when missing, with
// S3's PUT requests, as `aws s3 cp` would: objects not named in files are kept. The server
// checks no signature, so the requests carry none.
func (s *S3Server) Upload(ctx context.Context, bucket string, files map[string]string) error {
	if err := s.put(ctx, bucket, nil, http.StatusConflict); err != nil { // 409: it exists
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(files)) {
		if err := s.put(ctx, bucket+"/"+key, []byte(files[key])); err != nil {
			return err
		}
	}
	return nil
}

// put sends PUT path with body, which must answer 200 or one of alsoFine.
func (s *S3Server) put(ctx context.Context, path string, body []byte, alsoFine ...int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, s.server.URL+"/"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := s.server.Client().Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK && !slices.Contains(alsoFine, resp.StatusCode) {
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("PUT %s: %s: %s", path, resp.Status, answer)
	}
	return nil
}
