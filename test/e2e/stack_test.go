//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/osmops/osmops/internal/testing/openldap"
)

// The tests of this file check the stack itself: they pass without the OsmDeployment engine.

var _ = Describe("The e2e stack", func() {
	It("turns a push into a source artifact", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		tenant := newTenant(ctx, t, false)
		tenant.expectArtifact(ctx, t, tenant.seeded)

		changed, err := tenant.repo.Commit(map[string]string{"deploy/ldap.osmops.yaml": ldapInstance("ldap", "2")}, "Scale LDAP to 2")
		if err != nil {
			t.Fatal(err)
		}
		tenant.expectArtifact(ctx, t, changed)
	})

	It("restarts the operator after a kill", Serial, func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		operator := stack.Operator()
		readyz := operator.ReadyURL()
		g.Expect(get(ctx, readyz)).To(Succeed())
		killed := operator.Pid()

		g.Expect(operator.Kill()).To(Succeed())
		g.Expect(operator.Pid()).To(BeZero())
		g.Expect(get(ctx, readyz)).NotTo(Succeed(), "a killed operator still answers")

		g.Expect(operator.Restart(ctx)).To(Succeed())
		g.Expect(get(ctx, readyz)).To(Succeed())
		g.Expect(operator.Pid()).NotTo(Or(BeZero(), Equal(killed)))
	})

	It("serves the simulator's version", func() {
		t := GinkgoTB()
		ctx := testContext(t)
		g := NewWithT(t)
		g.Expect(get(ctx, stack.Simulator().URL()+"/osm/version")).To(Succeed())
		version, err := stack.Simulator().Version(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(version).NotTo(BeEmpty())
	})
})

// get fails unless a GET of url answers 200 OK.
func get(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// ldapInstance is a deployment file of the OpenLDAP example on the suite's VIM account.
func ldapInstance(name, replicaCount string) string {
	return openldap.NsInstanceFile(name, vimAccount, replicaCount)
}
