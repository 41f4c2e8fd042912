package controller

import (
	"bufio"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/osmops/osmops/internal/osm"
	"github.com/osmops/osmops/internal/testing/osmtenant"
)

// auditLinesOf returns the audit lines the suite's manager logged for the OsmDeployment
// namespace/name, decoded.
func auditLinesOf(deployment string) []map[string]any {
	var lines []map[string]any
	scanner := bufio.NewScanner(strings.NewReader(suiteLog.String()))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var line map[string]any
		if json.Unmarshal(scanner.Bytes(), &line) == nil && line["msg"] == osm.AuditMessage && line["osmDeployment"] == deployment {
			lines = append(lines, line)
		}
	}
	return lines
}

var _ = Describe("Audit trail", func() {
	It("an apply logs one audit line per change sent to OSM", func() {
		t := GinkgoTB()
		tn := newTenant(t)
		revision := tn.publish("gitops", demoRepo("1", "ldap", "ldap2"))
		d := tn.deployment("ldap", "gitops", noDriftCheck)
		tn.eventuallyApplied(d, revision)

		lines := auditLinesOf(tn.namespace + "/ldap")
		// The packages' uploads and marks, and the two creates: every change the simulator saw.
		tn.g.Expect(lines).To(HaveLen(int(tn.mutatingRequests())), tn.describe(d))
		tn.g.Expect(lines).To(HaveEach(SatisfyAll(
			HaveKeyWithValue("revision", revision),
			HaveKeyWithValue("planDigest", HavePrefix("sha256:")),
			HaveKeyWithValue("osmCluster", tn.namespace+"/"+osmtenant.ClusterName),
			HaveKeyWithValue("outcome", "accepted"),
			HaveKey("status"), HaveKey("durationSeconds"),
		)))
		creates := 0
		for _, line := range lines {
			if line["method"] == "POST" && line["path"] == "/osm/nslcm/v1/ns_instances_content" {
				creates++
				tn.g.Expect(line).To(SatisfyAll(HaveKey("id"), HaveKey("operationId")))
			}
		}
		tn.g.Expect(creates).To(Equal(2))
	})
})
