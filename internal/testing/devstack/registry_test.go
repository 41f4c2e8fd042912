package devstack

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/oci"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The artifact is what source-controller's OCIRepository pulls: Flux's config media type, one
// layer of Flux's content media type holding the files, and a revision of the tag and the
// manifest digest.
func TestPushArtifactLaysItOutAsFluxDoes(t *testing.T) {
	reg := StartOCIRegistry(nil)
	defer reg.Close()
	files := map[string]string{"deploy/ldap.osmops.yaml": "kind: NsInstance\n", "README.md": "hello\n"}
	revision, err := reg.PushArtifact(context.Background(), "tenant/gitops", DefaultOCITag, files)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(reg.URL("tenant/gitops"), "oci://127.0.0.1:") {
		t.Errorf("URL = %s, want one on loopback", reg.URL("tenant/gitops"))
	}

	ref, err := name.NewTag(strings.TrimPrefix(reg.URL("tenant/gitops"), "oci://")+":"+DefaultOCITag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultOCITag + "@" + digest.String(); revision != want {
		t.Errorf("revision = %s, want %s", revision, want)
	}
	manifest, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if manifest.Config.MediaType != oci.CanonicalConfigMediaType {
		t.Errorf("config media type = %s, want %s", manifest.Config.MediaType, oci.CanonicalConfigMediaType)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d (err %v), want 1", len(layers), err)
	}
	if mediaType, err := layers[0].MediaType(); err != nil || mediaType != oci.CanonicalContentMediaType {
		t.Errorf("layer media type = %s (err %v), want %s", mediaType, err, oci.CanonicalContentMediaType)
	}
	content, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer content.Close()
	if diff := cmp.Diff(files, regularFiles(t, content)); diff != "" {
		t.Errorf("files of the layer (-want +got):\n%s", diff)
	}
}

// regularFiles reads the regular files of a tar+gzip stream, by path.
func regularFiles(t *testing.T, tgz io.Reader) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(tgz)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			body, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = string(body)
		}
	}
}
