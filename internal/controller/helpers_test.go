package controller

import (
	"fmt"
	"maps"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/osmops/osmops/internal/testing/openldap"
)

// eventLog is an EventRecorder that keeps every event, for assertions.
type eventLog struct {
	mu     sync.Mutex
	events []recordedEvent
}

type recordedEvent struct {
	Namespace, Name, Type, Reason, Message string
	// Metadata is Flux's event metadata (the annotations of AnnotatedEventf).
	Metadata map[string]string
}

func newEventLog() *eventLog { return &eventLog{} }

func (l *eventLog) Event(object runtime.Object, eventtype, reason, message string) {
	l.Eventf(object, eventtype, reason, "%s", message)
}

func (l *eventLog) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.AnnotatedEventf(object, nil, eventtype, reason, messageFmt, args...)
}

func (l *eventLog) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	type named interface {
		GetNamespace() string
		GetName() string
	}
	e := recordedEvent{Type: eventtype, Reason: reason, Message: fmt.Sprintf(messageFmt, args...), Metadata: annotations}
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

// packageFiles returns the files of the OpenLDAP example's package folders names, under
// osm-pkgs/NAME/.
func packageFiles(names ...string) map[string]string {
	files, err := openldap.PackageFiles(names...)
	if err != nil {
		panic(err) // the example is part of the repository
	}
	return files
}

// nsInstanceFile is a deployment file of the OpenLDAP example on the tenants' VIM account.
func nsInstanceFile(name, replicaCount string) string {
	return openldap.NsInstanceFile(name, testVIMAccount, replicaCount)
}

// merge returns the union of file sets; later ones win.
func merge(sets ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	return out
}

// all returns every event, oldest first.
func (l *eventLog) all() []recordedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]recordedEvent(nil), l.events...)
}
