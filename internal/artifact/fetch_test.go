package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// entry is one tar entry of a test tarball.
type entry struct {
	name     string
	kind     byte
	body     string
	linkname string
	mode     int64
	// size overrides len(body) for entries whose contents are generated.
	size int64
}

func file(name, body string) entry { return entry{name: name, kind: tar.TypeReg, body: body} }
func dir(name string) entry        { return entry{name: name, kind: tar.TypeDir} }
func symlink(name, target string) entry {
	return entry{name: name, kind: tar.TypeSymlink, linkname: target}
}

// tarball makes a .tar.gz of entries; an entry with a size and no body holds
// that many zero bytes.
func tarball(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zipped := gzip.NewWriter(&buf)
	archive := tar.NewWriter(zipped)
	for _, e := range entries {
		size := int64(len(e.body))
		if e.size > 0 {
			size = e.size
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		header := &tar.Header{Name: e.name, Typeflag: e.kind, Linkname: e.linkname, Mode: mode, Format: tar.FormatPAX}
		if e.kind == tar.TypeReg {
			header.Size = size
		}
		if err := archive.WriteHeader(header); err != nil {
			t.Fatalf("writing tar header %q: %v", e.name, err)
		}
		if e.kind != tar.TypeReg {
			continue
		}
		contents := []byte(e.body)
		if e.size > 0 {
			contents = make([]byte, e.size)
		}
		if _, err := archive.Write(contents); err != nil {
			t.Fatalf("writing tar entry %q: %v", e.name, err)
		}
	}
	if err := archive.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zipped.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// artifactServer serves each body at its path, and again without
// Content-Length under "/chunked"; "/status/500" and "/status/403" answer
// with that status, other paths with 404.
func artifactServer(t *testing.T, bodies map[string][]byte) *httptest.Server {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := bodies[r.URL.Path]; ok {
			_, _ = w.Write(body)
			return
		}
		if body, ok := bodies[strings.TrimPrefix(r.URL.Path, "/chunked")]; ok {
			// A flushed first write makes a chunked answer without Content-Length.
			_, _ = w.Write(body[:1])
			w.(http.Flusher).Flush()
			_, _ = w.Write(body[1:])
			return
		}
		switch r.URL.Path {
		case "/status/500":
			w.WriteHeader(http.StatusInternalServerError)
		case "/status/403":
			w.WriteHeader(http.StatusForbidden)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(server.Close)
	return server
}

// unpackTarget makes an empty folder to unpack into, inside a parent folder
// that must stay untouched (apart from it) whatever the artifact holds.
func unpackTarget(t *testing.T) (parent, out string) {
	t.Helper()
	parent = t.TempDir()
	out = filepath.Join(parent, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return parent, out
}

// tree lists what a folder holds: "dir/", "file=contents", "link->target",
// with "(x)" after an executable file.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var listing []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			listing = append(listing, rel+"/")
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			listing = append(listing, rel+"->"+target)
		default:
			contents, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line := rel + "=" + string(contents)
			if info.Mode().Perm()&0o100 != 0 {
				line += "(x)"
			}
			listing = append(listing, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return listing
}

func TestFetchUnpacksAGoodArtifact(t *testing.T) {
	good := tarball(t,
		dir("./"),
		dir("_deployment_/"),
		file("_deployment_/ldap.ops.yaml", "kind: NsInstance\n"),
		entry{name: "bin/run.sh", kind: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o4755},
		file("./osm_ops_config.yaml", "targetDir: _deployment_\n"),
		symlink("_deployment_/current", "ldap.ops.yaml"),
		symlink("bin/deploy", "../_deployment_"),
	)
	sum384 := sha512.Sum384(good)
	sum512 := sha512.Sum512(good)
	server := artifactServer(t, map[string][]byte{"/good.tar.gz": good})
	want := []string{
		"_deployment_/",
		"_deployment_/current->ldap.ops.yaml",
		"_deployment_/ldap.ops.yaml=kind: NsInstance\n",
		"bin/",
		"bin/deploy->../_deployment_",
		"bin/run.sh=#!/bin/sh\n(x)",
		"osm_ops_config.yaml=targetDir: _deployment_\n",
	}
	for _, digest := range []string{
		sha256Digest(good),
		"sha384:" + hex.EncodeToString(sum384[:]),
		"sha512:" + hex.EncodeToString(sum512[:]),
	} {
		t.Run(strings.SplitN(digest, ":", 2)[0], func(t *testing.T) {
			parent, out := unpackTarget(t)
			if err := Fetch(context.Background(), server.Client(), server.URL+"/good.tar.gz", digest, out, Limits{}); err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if diff := cmp.Diff(want, tree(t, out)); diff != "" {
				t.Errorf("unpacked tree (-want +got):\n%s", diff)
			}
			assertConfined(t, parent)
		})
	}
}

func TestFetchRefusesHostileTarballs(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
		limits  Limits
		wantErr string
	}{
		{"dot-dot", []entry{file("../evil", "x")}, Limits{}, `tar entry "../evil" contains ".."`},
		{"dot-dot inside", []entry{file("a/../../evil", "x")}, Limits{}, `tar entry "a/../../evil" contains ".."`},
		{"dot-dot that stays inside", []entry{file("a/../b", "x")}, Limits{}, `tar entry "a/../b" contains ".."`},
		{"absolute", []entry{file("/etc/evil", "x")}, Limits{}, `tar entry "/etc/evil" has an absolute path`},
		{"symlink out", []entry{symlink("escape", "../../etc")}, Limits{}, `symlink "escape" points to "../../etc", outside the artifact`},
		{"absolute symlink", []entry{symlink("passwd", "/etc/passwd")}, Limits{}, `symlink "passwd" points to "/etc/passwd", outside the artifact`},
		{"symlink chain out", []entry{
			dir("p/q/"),
			symlink("p/q/l", "../.."),
			symlink("x", "p/q/l/.."),
		}, Limits{}, `symlink "x" points to "p/q/l/..", through another symlink`},
		{"file below symlink", []entry{
			dir("sub/"),
			symlink("l", "sub"),
			file("l/x", "x"),
		}, Limits{}, `tar entry "l/x" lies below "l", which is not a folder`},
		{"symlink over a folder", []entry{
			file("l/x", "x"),
			symlink("l", "/tmp"),
		}, Limits{}, `tar entry "l" appears twice`},
		{"duplicate file", []entry{file("a", "1"), file("a", "2")}, Limits{}, `tar entry "a" appears twice`},
		{"character device", []entry{{name: "null", kind: tar.TypeChar}}, Limits{}, `tar entry "null" is a device file or FIFO, which is not allowed`},
		{"block device", []entry{{name: "sda", kind: tar.TypeBlock}}, Limits{}, `tar entry "sda" is a device file or FIFO, which is not allowed`},
		{"fifo", []entry{{name: "pipe", kind: tar.TypeFifo}}, Limits{}, `tar entry "pipe" is a device file or FIFO, which is not allowed`},
		{"hard link", []entry{file("a", "1"), {name: "b", kind: tar.TypeLink, linkname: "a"}}, Limits{}, `tar entry "b" is a hard link, which is not allowed`},
		{"bomb", []entry{file("small", "x"), {name: "zeros", kind: tar.TypeReg, size: 8 << 20}}, Limits{MaxUnpackedBytes: 1 << 20},
			`the unpacked files exceed 1048576 bytes (at tar entry "zeros")`},
		{"huge header", []entry{dir(strings.Repeat("d/", 100000))}, Limits{MaxFiles: 1, MaxUnpackedBytes: 1},
			`the decompressed tarball is larger than its bound`},
		{"long name", []entry{dir(strings.Repeat("d/", 600))}, Limits{},
			`tar entry "` + strings.Repeat("d/", 32) + `"... has a name longer than 1024 bytes`},
		{"too many files", []entry{file("a", ""), file("b", ""), file("c", ""), file("d", "")}, Limits{MaxFiles: 3},
			`the tarball has more than 3 entries`},
		{"too many implied folders", []entry{file("a/b/c/d", "")}, Limits{MaxFiles: 3},
			`the tarball makes more than 3 files and folders (counting the folders its paths imply)`},
		// 60 entries whose paths imply 511 folders each: 30,660 folders, more than the default
		// bound too (20,000), which would take a minute of unpacking to reach here.
		{"folder bomb", folderBomb(60), Limits{MaxFiles: 1000},
			`the tarball makes more than 1000 files and folders (counting the folders its paths imply)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := tarball(t, tc.entries...)
			server := artifactServer(t, map[string][]byte{"/a.tar.gz": body})
			parent, out := unpackTarget(t)
			err := Fetch(context.Background(), server.Client(), server.URL+"/a.tar.gz", sha256Digest(body), out, tc.limits)
			if !errors.Is(err, ErrInvalidArtifact) {
				t.Fatalf("Fetch error = %v; want an ErrInvalidArtifact", err)
			}
			if want := "invalid artifact: " + tc.wantErr; err.Error() != want {
				t.Errorf("Fetch error =\n%s\nwant\n%s", err, want)
			}
			assertConfined(t, parent)
		})
	}
}

// folderBomb makes entries files, each the end of a path of 511 one-letter folders (a name of
// 1,024 bytes, the bound on names) of its own.
func folderBomb(entries int) []entry {
	bomb := make([]entry, entries)
	for i := range bomb {
		bomb[i] = file(fmt.Sprintf("%02d/%sf", i, strings.Repeat("d/", 510)), "")
	}
	return bomb
}

// assertConfined checks that parent holds only the unpack folder, which holds
// at most 1 MiB of files and no symlink leading outside it.
func assertConfined(t *testing.T, parent string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "out" {
		t.Fatalf("the parent folder holds %v, want only out", entries)
	}
	out, err := filepath.EvalSymlinks(filepath.Join(parent, "out"))
	if err != nil {
		t.Fatal(err)
	}
	var written int64
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			resolved, err := filepath.EvalSymlinks(p)
			if err == nil && resolved != out && !strings.HasPrefix(resolved, out+string(filepath.Separator)) {
				t.Errorf("symlink %s resolves to %s, outside the unpack folder", p, resolved)
			}
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			written += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if written > 1<<20 {
		t.Errorf("%d bytes were written, more than 1 MiB", written)
	}
}

func TestFetchErrors(t *testing.T) {
	good := tarball(t, file("a", "1"))
	server := artifactServer(t, map[string][]byte{"/good.tar.gz": good, "/junk.tar.gz": []byte("this is not a gzip stream")})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	hostPort := strings.TrimPrefix(server.URL, "http://")
	tests := []struct {
		name        string
		url         string
		digest      string
		limits      Limits
		wantErr     string
		wantInvalid bool
	}{
		{
			name: "digest mismatch", url: server.URL + "/good.tar.gz", digest: sha256Digest([]byte("other")),
			wantErr:     "invalid artifact: artifact " + server.URL + "/good.tar.gz has digest " + sha256Digest(good) + ", expected " + sha256Digest([]byte("other")),
			wantInvalid: true,
		},
		{
			name: "unsupported digest", url: server.URL + "/good.tar.gz", digest: "md5:0123456789abcdef0123456789abcdef",
			wantErr: `invalid artifact: digest "md5:0123456789abcdef0123456789abcdef": unsupported digest algorithm`, wantInvalid: true,
		},
		{
			name: "download too big", url: server.URL + "/good.tar.gz", digest: sha256Digest(good), limits: Limits{MaxDownloadBytes: 10},
			wantErr: "invalid artifact: artifact " + server.URL + "/good.tar.gz is " + strconv.Itoa(len(good)) + " bytes, over the limit of 10 bytes", wantInvalid: true,
		},
		{
			name: "download too big without Content-Length", url: server.URL + "/chunked/good.tar.gz", digest: sha256Digest(good), limits: Limits{MaxDownloadBytes: 10},
			wantErr: "invalid artifact: artifact " + server.URL + "/chunked/good.tar.gz is larger than the limit of 10 bytes", wantInvalid: true,
		},
		{
			name: "not a gzip stream", url: server.URL + "/junk.tar.gz", digest: sha256Digest([]byte("this is not a gzip stream")),
			wantErr: "invalid artifact: not a gzip stream: gzip: invalid header", wantInvalid: true,
		},
		{
			name: "404 is transient: the source replaces the artifact", url: server.URL + "/gone.tar.gz", digest: sha256Digest(good),
			wantErr: "downloading artifact " + server.URL + "/gone.tar.gz: HTTP 404 Not Found",
		},
		{
			name: "500 is transient", url: server.URL + "/status/500", digest: sha256Digest(good),
			wantErr: "downloading artifact " + server.URL + "/status/500: HTTP 500 Internal Server Error",
		},
		{
			name: "403 is not transient", url: server.URL + "/status/403", digest: sha256Digest(good),
			wantErr: "downloading artifact " + server.URL + "/status/403: HTTP 403 Forbidden",
		},
		{
			name: "credentials never shown", url: "http://flux:s3cret@" + hostPort + "/status/500?token=t0ken#frag", digest: sha256Digest(good),
			wantErr: "downloading artifact " + server.URL + "/status/500: HTTP 500 Internal Server Error",
		},
		{
			name: "unparsable URL never shown", url: "http://flux:s3cret@host:port/x", digest: sha256Digest(good),
			wantErr: "invalid artifact: the artifact URL cannot be parsed", wantInvalid: true,
		},
		{
			name: "connection refused is transient", url: "http://flux:s3cret@" + strings.TrimPrefix(closed.URL, "http://") + "/a.tar.gz?token=t0ken", digest: sha256Digest(good),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent, out := unpackTarget(t)
			err := Fetch(context.Background(), server.Client(), tc.url, tc.digest, out, tc.limits)
			if err == nil {
				t.Fatal("Fetch succeeded, want an error")
			}
			if tc.wantErr != "" && err.Error() != tc.wantErr {
				t.Errorf("Fetch error =\n%s\nwant\n%s", err, tc.wantErr)
			}
			if got := errors.Is(err, ErrInvalidArtifact); got != tc.wantInvalid {
				t.Errorf("errors.Is(err, ErrInvalidArtifact) = %v, want %v (%v)", got, tc.wantInvalid, err)
			}
			for _, secret := range []string{"s3cret", "t0ken", "flux"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows %q: %v", secret, err)
				}
			}
			assertConfined(t, parent)
		})
	}
}

func TestFetchNeedsAnEmptyFolder(t *testing.T) {
	body := tarball(t, file("a", "1"))
	server := artifactServer(t, map[string][]byte{"/a.tar.gz": body})
	_, out := unpackTarget(t)
	if err := os.WriteFile(filepath.Join(out, "left-over"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := Fetch(context.Background(), server.Client(), server.URL+"/a.tar.gz", sha256Digest(body), out, Limits{})
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("Fetch error = %v, want a not-empty error", err)
	}
}

func TestFetchStopsWhenTheContextIsCancelled(t *testing.T) {
	body := tarball(t, file("a", "1"))
	server := artifactServer(t, map[string][]byte{"/a.tar.gz": body})
	_, out := unpackTarget(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Fetch(ctx, server.Client(), server.URL+"/a.tar.gz", sha256Digest(body), out, Limits{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Fetch error = %v, want context.Canceled", err)
	}
}
