package controller

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/osmops/osmops/api/v1alpha1"
)

// statusSizeLimit refuses the status patches larger than limit bytes (none when 0), as the API
// server refuses a status that etcd cannot store: 413 and no change.
type statusSizeLimit struct {
	client.Client
	limit *atomic.Int64
}

func (c statusSizeLimit) Status() client.SubResourceWriter {
	return limitedStatusWriter{c.Client.Status(), c.limit}
}

type limitedStatusWriter struct {
	client.SubResourceWriter
	limit *atomic.Int64
}

func (w limitedStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	data, err := patch.Data(obj)
	if limit := w.limit.Load(); err == nil && limit > 0 && int64(len(data)) > limit {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

var _ = Describe("Status writes", func() {
	// A status the API server refuses to store (a revision of many long names, here over a size
	// limit of the test's) never leaves the OsmDeployment saying Ready with the previous revision:
	// Ready=False StatusWriteFailed, with the API server's message, and a Warning event. Nothing is
	// created in OSM meanwhile: the pending creates could not be recorded.
	It("a refused status is reported", func() {
		t := GinkgoTB()
		const shard = "status-limit"
		limit := &atomic.Int64{}
		options := managerOptions(shardLabel + "=" + shard)
		options.NewClient = func(config *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.New(config, opts)
			return statusSizeLimit{Client: c, limit: limit}, err
		}
		startManagerWith(t, shard, true, options)
		tn := newTenantInShard(t, shard)
		d := tn.appliedDeployment([]string{"ldap"})

		limit.Store(4096)
		var names []string
		for i := range 20 {
			names = append(names, fmt.Sprintf("ldap-%d-%s", i, strings.Repeat("x", 200)))
		}
		tn.publish("gitops", demoRepo("2", names...))
		tn.eventuallyCondition(d, meta.ReadyCondition, HavePrefix("False "+gitopsv1alpha1.StatusWriteFailedReason+
			": the status of this reconcile could not be written: "))
		tn.g.Expect(tn.get(d).Status.LastAppliedRevision).NotTo(BeEmpty(), "the status last stored, but Ready")
		tn.g.Eventually(func() string { return recorder.messagesOf(d.Namespace, d.Name) }).Should(
			ContainSubstring("the status of this reconcile could not be written: Request entity too large: limit is 4096"))
		tn.g.Expect(tn.countRequests("POST /osm/nslcm/v1/ns_instances_content")).To(BeEquivalentTo(1), "only ldap's create, of the first revision")

		limit.Store(0)
		requestReconcile(tn, d, "the limit is gone")
		tn.g.Eventually(func() int { return len(tn.get(d).Status.Inventory.NsInstances) }).Should(Equal(len(names)), func() string { return tn.describe(d) })
	})
})
