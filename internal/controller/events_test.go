package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

var _ = Describe("Events", func() {
	It("deployment events carry flux metadata", func() {
		t := GinkgoTB()
		g := NewWithT(t)
		log := newEventLog()
		events := deploymentEvents{EventRecorder: log}
		d := &gitopsv1alpha1.OsmDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "d", Generation: 3}}
		d.Status.LastAttemptedRevision = "main@sha1:aaa"
		cluster := &gitopsv1alpha1.OsmCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "t", Name: "c", Generation: 2}}

		events.Eventf(d, corev1.EventTypeNormal, "Applied", "revision %s applied", "main@sha1:aaa")
		// An event about a revision not yet attempted names that one.
		events.AnnotatedEventf(d, revisionEvent("main@sha1:bbb"), corev1.EventTypeWarning, gitopsv1alpha1.RepositorySettingsReason, "ignored")
		events.Eventf(cluster, corev1.EventTypeWarning, gitopsv1alpha1.InsecureTLSReason, "no TLS verification")

		g.Expect(log.of("t", "d")).To(HaveExactElements(
			HaveField("Metadata", Equal(map[string]string{"gitops.osmops.io/revision": "main@sha1:aaa", "gitops.osmops.io/token": "3"})),
			HaveField("Metadata", Equal(map[string]string{"gitops.osmops.io/revision": "main@sha1:bbb", "gitops.osmops.io/token": "3"})),
		))
		// An OsmCluster has no revision: its events carry none.
		g.Expect(log.of("t", "c")).To(HaveExactElements(HaveField("Metadata", BeNil())))
	})
})
