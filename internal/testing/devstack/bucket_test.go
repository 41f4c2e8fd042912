package devstack

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// What source-controller's Bucket reads: each object's content and its Last-Modified header,
// the newest upload's.
func TestS3UploadKeepsOtherObjectsAndReplacesNamedOnes(t *testing.T) {
	home, err := newProcessHome(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s3, err := (&Stack{processHome: home}).StartS3Server("s3")
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	ctx := context.Background()
	if err := s3.Upload(ctx, "gitops", map[string]string{"a.yaml": "a: 1\n", "b/c.yaml": "c: 1\n"}); err != nil {
		t.Fatal(err)
	}
	if err := s3.Upload(ctx, "gitops", map[string]string{"a.yaml": "a: 2\n"}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"a.yaml": "a: 2\n", "b/c.yaml": "c: 1\n"} {
		resp, err := http.Get("http://" + s3.Endpoint() + "/gitops/" + key)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || string(body) != want {
			t.Errorf("GET %s = %s %q (err %v), want 200 %q", key, resp.Status, body, err, want)
		}
		if _, err := time.Parse(http.TimeFormat, resp.Header.Get("Last-Modified")); err != nil {
			t.Errorf("GET %s: Last-Modified %q: %v", key, resp.Header.Get("Last-Modified"), err)
		}
	}
}
