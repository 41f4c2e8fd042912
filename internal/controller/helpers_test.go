package controller

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osmops/osmops/internal/testing/artifactserver"
)

// eventLog is an EventRecorder that keeps every event, for assertions.
type eventLog struct {
	mu     sync.Mutex
	events []recordedEvent
}

type recordedEvent struct {
	Namespace, Name, Type, Reason, Message string
}

func newEventLog() *eventLog { return &eventLog{} }

func (l *eventLog) Event(object runtime.Object, eventtype, reason, message string) {
	l.Eventf(object, eventtype, reason, "%s", message)
}

func (l *eventLog) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.AnnotatedEventf(object, nil, eventtype, reason, messageFmt, args...)
}

func (l *eventLog) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	type named interface {
		GetNamespace() string
		GetName() string
	}
	e := recordedEvent{Type: eventtype, Reason: reason, Message: fmt.Sprintf(messageFmt, args...)}
	if o, ok := object.(named); ok {
		e.Namespace, e.Name = o.GetNamespace(), o.GetName()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// of returns the events of one object, oldest first.
func (l *eventLog) of(namespace, name string) []recordedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []recordedEvent
	for _, e := range l.events {
		if e.Namespace == namespace && e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// messagesOf returns the messages of one object's events, with their type and reason.
func (l *eventLog) messagesOf(namespace, name string) string {
	var lines []string
	for _, e := range l.of(namespace, name) {
		lines = append(lines, e.Type+" "+e.Reason+": "+e.Message)
	}
	return strings.Join(lines, "\n")
}

// artifactServer stands for source-controller's artifact storage.
type artifactServer struct{ *artifactserver.Server }

func newArtifactServer() *artifactServer {
	return &artifactServer{artifactserver.NewServer()}
}

// publish stores a tarball of files and returns its URL, the revision and the digest that
// source-controller would report for it.
func (a *artifactServer) publish(path string, files map[string]string) (url, revision, digest string) {
	return a.Publish(path, tarGz(files))
}

// tarGz packs files (path to content) as a source-controller artifact.
func tarGz(files map[string]string) []byte {
	tarball, err := artifactserver.TarGz(files)
	if err != nil {
		panic(err) // in-memory writes of a test's own files do not fail
	}
	return tarball
}

// packageFiles returns the files of a package folder of testdata, under osm-pkgs/NAME/.
func packageFiles(name string) map[string]string {
	files := map[string]string{}
	root := filepath.Join("testdata", name)
	entries, err := os.ReadDir(root)
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			panic(err)
		}
		files["osm-pkgs/"+name+"/"+e.Name()] = string(data)
	}
	return files
}

// nsInstanceFile is a deployment file in the first generation's format.
func nsInstanceFile(name, replicaCount string) string {
	return fmt.Sprintf(`kind: NsInstance
name: %s
description: Demo LDAP
nsdName: openldap_ns
vnfName: openldap
vimAccountName: site1
kdu:
  name: ldap
  params:
    replicaCount: "%s"
`, name, replicaCount)
}

// merge returns the union of file sets; later ones win.
func merge(sets ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, s := range sets {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

// publishTarball stores a tarball as it is and returns its URL, the revision and the digest
// that source-controller would report for it.
func (a *artifactServer) publishTarball(path string, tarball []byte) (url, revision, digest string) {
	return a.Publish(path, tarball)
}

// all returns every event, oldest first.
func (l *eventLog) all() []recordedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]recordedEvent(nil), l.events...)
}
