package artifact

import (
	"archive/tar"
	"bytes"
	"context"
	"testing"
)

// FuzzUntar checks that no input, however malformed, makes untar panic or
// write anything outside its folder.
func FuzzUntar(f *testing.F) {
	f.Add(tarball(f, dir("a/"), file("a/b.yaml", "kind: NsInstance\n"), symlink("c", "a/b.yaml")))
	f.Add(tarball(f, file("../evil", "x")))
	f.Add(tarball(f, dir("p/q/"), symlink("p/q/l", "../.."), symlink("x", "p/q/l/..")))
	f.Add(tarball(f, file("a", "1"), entry{name: "b", kind: tar.TypeLink, linkname: "a"}))
	f.Add(tarball(f, entry{name: "zeros", kind: tar.TypeReg, size: 4 << 10}))
	f.Add([]byte("not a tarball"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent, out := unpackTarget(t)
		limits := Limits{MaxDownloadBytes: 1 << 20, MaxUnpackedBytes: 1 << 20, MaxFiles: 100}
		_ = untar(context.Background(), bytes.NewReader(data), out, limits)
		assertConfined(t, parent)
	})
}
