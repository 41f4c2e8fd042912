package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"k8s.io/apimachinery/pkg/types"

	"github.com/osmops/osmops/internal/artifact"
	"github.com/osmops/osmops/internal/gitops"
	"github.com/osmops/osmops/internal/nbisim"
	"github.com/osmops/osmops/internal/testing/openldap"
)

// The manager's documented defaults that the hostile scenario runs with.
const (
	// DocumentedMemoryLimit is the manager container's memory limit
	// (config/manager/manager.yaml, docs/operations.md "Memory model").
	DocumentedMemoryLimit = 2 << 30
	// ManagerAnswerMemory is cmd/main.go's default --max-nbi-answer-memory.
	ManagerAnswerMemory = 64 << 20
)

// The attacks' sizes, at the documented bounds.
const (
	// largePackageBytes is the incompressible file each package-failure tenant adds to its KNF
	// package: a package holds at most 64 MiB, an artifact's download at most 100 MiB.
	largePackageBytes = 60 << 20
	// packageFailureTenants is how many tenants whose OSM fails the descriptor list pin their
	// tarballs at once.
	packageFailureTenants = 3
	// folderBombChains are the folder chains of the folder bomb, each a top folder, its
	// nested folders and one file, so that the artifact has exactly artifact.DefaultMaxFiles
	// entries, almost all of them implied by the files' paths.
	folderBombChains = 100
	// longNameLength is the longest NS instance name (OSM's name schema, gitops).
	longNameLength = 255
	// tinyKeysHeaderAllowance bounds what the parsed size of a tiny-keys deployment file's
	// header (its fields before the keys) counts, so that the file stays under
	// gitops.MaxParsedFileBytes.
	tinyKeysHeaderAllowance = 64*gitops.ParsedNodeBytes + 1024
)

// HostileTenant is what one attacking OsmDeployment (or the victim's) ended as.
type HostileTenant struct {
	// Name is namespace/name; Attack says what it pushes.
	Name, Attack string
	// Outcome is its Ready condition when the benchmark stopped waiting.
	Outcome string
}

// HostileResult holds the figures of the hostile tenants scenario.
type HostileResult struct {
	// MemoryLimit is the Go runtime's soft limit during the run (GOMEMLIMIT's).
	MemoryLimit int64
	// VictimReady is the time from the creations until the victim was Ready with its revision;
	// zero when it was not by the timeout.
	VictimReady time.Duration
	// Tenants are the attackers' and the victim's outcomes.
	Tenants []HostileTenant
	// ArtifactBytes are the bytes of the artifacts' files, about what the benchmark's own
	// artifact server (source-controller's, in a cluster) holds of them in the measured process:
	// the large packages' random files, most of it, do not compress.
	ArtifactBytes int64
	Usage         Usage
	Error         string
}

// hostileDeployment is one OsmDeployment of the scenario.
type hostileDeployment struct {
	tenant     *Tenant
	name       string
	attack     string
	substitute map[string]string
	// revision is the one it must apply; empty when it must be refused.
	revision string
}

// hostileAttack is one attacking tenant: its files, the faults of its OSM, and whether its
// revision must be applied.
type hostileAttack struct {
	namespace, attack string
	files             map[string]string
	substitute        map[string]string
	faults            []nbisim.Fault
	applies           bool
}

// RunHostile runs the hostile tenants at the documented bounds and a victim at once, with the
// Go runtime's memory limit at the documented container limit, as GOMEMLIMIT set from the
// container's limit would make it: the manager must stay under the limit and the victim become
// Ready. It mutes the operator's logs when it ends: run it last.
func (b *Bench) RunHostile(ctx context.Context) HostileResult {
	defer b.Operator.MuteLogs()
	result := HostileResult{MemoryLimit: DocumentedMemoryLimit}
	if err := b.runHostile(ctx, &result); err != nil {
		result.Error = err.Error()
	}
	return result
}

func (b *Bench) runHostile(ctx context.Context, result *HostileResult) error {
	attacks, err := hostileAttacks(b.Packages)
	if err != nil {
		return err
	}
	attacks = append(attacks, hostileAttack{namespace: "victim", attack: "a normal revision of 10 NS instances",
		files: RepositoryFiles(Workload{N: 10, Prefix: "victim"}.First(), b.Packages), applies: true})
	var deployments []hostileDeployment
	for _, a := range attacks {
		sim, err := b.startSimulator(ctx, "")
		if err != nil {
			return err
		}
		defer func() { _ = sim.Stop() }()
		tenant, err := b.Operator.NewTenant(ctx, TenantOptions{Namespace: "hostile-" + a.namespace, NBI: sim.URL(),
			Credentials: b.Credentials, MaxConcurrentRequests: b.Settings.MaxConcurrentRequests})
		if err != nil {
			return err
		}
		for _, fault := range a.faults {
			if err := sim.AddFault(ctx, fault); err != nil {
				return err
			}
		}
		published, err := tenant.publish(ctx, a.namespace, a.files)
		if err != nil {
			return err
		}
		for _, content := range a.files {
			result.ArtifactBytes += int64(len(content))
		}
		d := hostileDeployment{tenant: tenant, name: a.namespace, attack: a.attack, substitute: a.substitute}
		if a.applies {
			d.revision = published.Revision
		}
		deployments = append(deployments, d)
	}
	victim := deployments[len(deployments)-1]

	previous := debug.SetMemoryLimit(DocumentedMemoryLimit)
	defer debug.SetMemoryLimit(previous)
	window := b.Meter.Start()
	waitCtx, cancel := context.WithTimeout(ctx, b.Settings.ScenarioTimeout)
	defer cancel()
	started := time.Now()
	if err := forEach(waitCtx, len(deployments), func(ctx context.Context, i int) error {
		d := deployments[i]
		return d.tenant.CreateDeployment(ctx, d.name, d.name, d.substitute)
	}); err != nil {
		return err
	}
	if err := victim.tenant.WaitApplied(waitCtx, victim.name, victim.revision); err == nil {
		result.VictimReady = time.Since(started)
	}
	for _, d := range deployments {
		settled := d.tenant.waitSettled(waitCtx, d.name, d.revision)
		result.Tenants = append(result.Tenants, HostileTenant{Name: d.tenant.namespace + "/" + d.name, Attack: d.attack,
			Outcome: d.tenant.readiness(d.name, settled)})
	}
	result.Usage = b.Meter.Measure(window)
	fmt.Fprintf(b.Progress, "%-24s peak heap+stack %s, peak RSS %s (limit %s), victim Ready after %s\n", "hostile tenants",
		formatBytes(result.Usage.PeakHeap), formatBytes(result.Usage.PeakRSS), formatBytes(DocumentedMemoryLimit), formatDuration(result.VictimReady))
	return nil
}

// waitSettled waits until the OsmDeployment has applied revision, or, when revision is empty,
// says that it is not Ready; false when the wait ended first.
func (t *Tenant) waitSettled(ctx context.Context, name, revision string) bool {
	key := types.NamespacedName{Namespace: t.namespace, Name: name}
	return t.op.watch.waitUntil(ctx, func(seen observed) bool {
		d := seen.latest[key]
		if revision != "" {
			return applied(d, revision)
		}
		return d != nil && conditions.IsFalse(d, meta.ReadyCondition)
	}) == nil
}

// readiness says what the OsmDeployment's Ready condition says, briefly.
func (t *Tenant) readiness(name string, settled bool) string {
	d := t.op.watch.latest(types.NamespacedName{Namespace: t.namespace, Name: name})
	outcome := "no status"
	if ready := conditions.Get(d, meta.ReadyCondition); d != nil && ready != nil {
		outcome = fmt.Sprintf("Ready=%s %s: %s", ready.Status, ready.Reason, shorten(ready.Message, 160))
	}
	if !settled {
		outcome = "(still going when the benchmark stopped waiting) " + outcome
	}
	return outcome
}

// shorten cuts s to at most n bytes of whole runes.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.ToValidUTF8(s[:n], "")
	return cut + "…"
}

// hostileAttacks are the attacking tenants, each at the full documented bound of what it
// abuses.
func hostileAttacks(packages map[string]string) ([]hostileAttack, error) {
	attacks := []hostileAttack{
		{namespace: "substitution", attack: fmt.Sprintf("files of 4 KiB and 1 MiB of ${v} (up to %d references), v of %s: refused",
			gitops.MaxVariableReferences, formatBytes(gitops.MaxVariableBytes)),
			files: substitutionFiles(), substitute: map[string]string{"v": strings.Repeat("x", gitops.MaxVariableBytes)}},
		{namespace: "tiny-keys", attack: fmt.Sprintf("%d deployment files of tiny kdu.params keys, each just under %s parsed, %s in all",
			gitops.MaxParsedRevisionBytes/gitops.MaxParsedFileBytes, formatBytes(gitops.MaxParsedFileBytes), formatBytes(gitops.MaxParsedRevisionBytes)),
			files: tinyKeysFiles(packages), applies: true},
		{namespace: "folder-bomb", attack: fmt.Sprintf("%d files whose paths imply %d folders: %d entries, the bound (accepted, nothing to apply)",
			folderBombChains, artifact.DefaultMaxFiles-folderBombChains, artifact.DefaultMaxFiles),
			files: folderBombFiles(), applies: true},
		{namespace: "status", attack: fmt.Sprintf("%d NS instances of %d-character names (the status at its bound)", gitops.MaxNsInstances, longNameLength),
			files: longNameFiles(packages), applies: true},
	}
	for i := range packageFailureTenants {
		files, err := largePackageFiles(packages)
		if err != nil {
			return nil, err
		}
		attacks = append(attacks, hostileAttack{namespace: fmt.Sprintf("packages-%d", i),
			attack: fmt.Sprintf("packages with a %s file, OSM failing the descriptor lists", formatBytes(largePackageBytes)),
			files:  files, faults: descriptorListFailures})
	}
	return attacks, nil
}

// descriptorListFailures make an OSM fail every read of its VNF and NS packages.
var descriptorListFailures = []nbisim.Fault{
	{Method: "GET", PathPrefix: "/osm/vnfpkgm/", Status: 500},
	{Method: "GET", PathPrefix: "/osm/nsd/", Status: 500},
}

// substitutionFiles are deployment files whose ${v} would expand to 64 MiB and 256 MiB and
// more: a 4 KiB file, a 1 MiB file of the most references allowed and padding, and a 1 MiB
// file of nothing but references.
func substitutionFiles() map[string]string {
	const mib = 1 << 20
	references := func(size int) int { return (size - 256) / len("${v}") }
	return map[string]string{
		"deploy/small.osmops.yaml":      substitutionFile("small", 4<<10, references(4<<10)),
		"deploy/padded.osmops.yaml":     substitutionFile("padded", mib, gitops.MaxVariableReferences),
		"deploy/references.osmops.yaml": substitutionFile("references", mib, references(mib)),
	}
}

// substitutionFile is a deployment file of size bytes (at least) whose replicaCount is
// references times ${v}, padded with a comment.
func substitutionFile(name string, size, references int) string {
	body := strings.TrimSuffix(openldap.NsInstanceFile(name, VIMAccount, ""), "\"\"\n") + "\"" + strings.Repeat("${v}", references) + "\"\n"
	if padding := size - len(body) - len("#\n"); padding > 0 {
		return "#" + strings.Repeat("-", padding) + "\n" + body
	}
	return body
}

// tinyKeysFiles are the packages and as many deployment files of tiny kdu.params keys as the
// parsed revision's bound allows, each just under the parsed file's bound (the generator of
// gitops' TestParsedRevisionAtItsBoundStaysWithinItsParsedSize): the revision the operator
// keeps at its largest.
func tinyKeysFiles(packages map[string]string) map[string]string {
	files := maps.Clone(packages)
	for i := range gitops.MaxParsedRevisionBytes / gitops.MaxParsedFileBytes {
		name := fmt.Sprintf("tiny-keys-%d", i)
		files["deploy/"+name+".osmops.yaml"] = tinyKeysFile(name, gitops.MaxParsedFileBytes)
	}
	return files
}

// tinyKeysFile is a deployment file whose kdu.params hold keys of one-digit values up to
// parsedSize, in flow style as the fewest bytes of text: each key and value count
// gitops.ParsedNodeBytes and twice their text.
func tinyKeysFile(name string, parsedSize int64) string {
	var file strings.Builder
	file.WriteString(strings.TrimSuffix(openldap.NsInstanceFile(name, VIMAccount, "1"), "  params:\n    replicaCount: \"1\"\n"))
	file.WriteString("  params: {replicaCount: \"1\"")
	for i, size := int64(0), int64(tinyKeysHeaderAllowance); ; i++ {
		key := "k" + strconv.FormatInt(i, 36)
		if size += 2*gitops.ParsedNodeBytes + 2*int64(len(key)+1); size > parsedSize {
			break
		}
		file.WriteString(", " + key + ": 1")
	}
	file.WriteString("}\n")
	return file.String()
}

// folderBombFiles are folderBombChains files, each at the end of its own chain of folders of
// one-letter names (a tar entry's name is at most 1 KiB), so that the artifact has exactly
// artifact.DefaultMaxFiles entries, files and folders.
func folderBombFiles() map[string]string {
	depth := artifact.DefaultMaxFiles/folderBombChains - 2 // the chain's top folder and its file
	files := make(map[string]string, folderBombChains)
	for i := range folderBombChains {
		files[fmt.Sprintf("c%02d/", i)+strings.Repeat("d/", depth)+"f"] = ""
	}
	return files
}

// longNameFiles are the packages and gitops.MaxNsInstances deployment files of NS instances
// with names of the longest length, in files of short names.
func longNameFiles(packages map[string]string) map[string]string {
	files := maps.Clone(packages)
	w := Workload{N: gitops.MaxNsInstances, Prefix: strings.Repeat("s", longNameLength-len("-0000"))}
	for i, instance := range w.First() {
		files[fmt.Sprintf("deploy/%04d.osmops.yaml", i)] = openldap.NsInstanceFile(instance.Name, VIMAccount, instance.ReplicaCount)
	}
	return files
}

// largePackageFiles are the packages, the KNF's with an incompressible file of
// largePackageBytes of its own (each tenant's artifact differs), and 10 NS instances.
func largePackageFiles(packages map[string]string) (map[string]string, error) {
	blob := make([]byte, largePackageBytes)
	if _, err := rand.Read(blob); err != nil {
		return nil, err
	}
	files := RepositoryFiles(Workload{N: 10, Prefix: "packages"}.First(), packages)
	files["osm-pkgs/openldap_knf/blob.bin"] = string(blob)
	return files, nil
}

// hostileVerdicts check that the manager stayed under the documented container limit, and that
// the victim became Ready.
func hostileVerdicts(h *HostileResult) []Verdict {
	memory := Verdict{Target: fmt.Sprintf("hostile tenants at the documented bounds: stays under the documented container limit (%s), peak RSS",
		formatBytes(DocumentedMemoryLimit))}
	ready := Verdict{Target: "hostile tenants at the documented bounds: the victim tenant becomes Ready"}
	if h.Error != "" {
		memory.Measured, ready.Measured = "not measured: "+h.Error, "not measured: "+h.Error
		return []Verdict{memory, ready}
	}
	memory.Measured = fmt.Sprintf("%s RSS (%s heap+stack)", formatBytes(h.Usage.PeakRSS), formatBytes(h.Usage.PeakHeap))
	memory.Pass = h.Usage.PeakRSS < DocumentedMemoryLimit
	if !memory.Pass {
		memory.Why = "An attack made the manager hold more than docs/operations.md's memory model allows: see the section on hostile tenants."
	}
	ready.Measured, ready.Pass = "not Ready when the benchmark stopped waiting", h.VictimReady > 0
	if ready.Pass {
		ready.Measured = "Ready after " + formatDuration(h.VictimReady)
	} else {
		ready.Why = "The attacks kept the victim's reconciles from running or failing alone: see the section on hostile tenants."
	}
	return []Verdict{memory, ready}
}

// renderHostile writes the hostile tenants scenario's section.
func renderHostile(md *markdown, h *HostileResult) {
	md.heading("Hostile tenants at the documented bounds")
	md.line("Hostile tenants and a victim, each in its own namespace with its own OSM (an NBI simulator), create their")
	md.line("OsmDeployments at once, on the manager's default workers (`--concurrent` 4 of each kind, `--max-nbi-answer-memory`")
	md.line("64 MiB), with the Go runtime's memory limit set to the documented container limit, %s (`debug.SetMemoryLimit`, as", formatBytes(uint64(h.MemoryLimit)))
	md.line("GOMEMLIMIT set from the container's limit would). The peaks are the whole benchmark process's: the manager, and the")
	md.line("artifact server that stands for source-controller, which holds about %s of artifacts in it. Times count from", formatBytes(uint64(h.ArtifactBytes)))
	md.line("the creations; the benchmark waits for each OsmDeployment to apply its revision or to say why not.")
	md.line("")
	if h.Error != "" {
		md.line("Not measured: %s", h.Error)
		return
	}
	md.row("tenant", "attack", "outcome")
	md.row("---", "---", "---")
	for _, t := range h.Tenants {
		md.row(t.Name, t.Attack, t.Outcome)
	}
	md.line("")
	victim := "not Ready when the benchmark stopped waiting"
	if h.VictimReady > 0 {
		victim = formatDuration(h.VictimReady)
	}
	md.row("", "")
	md.row("---", "---:")
	md.row("victim Ready after", victim)
	md.row("wall time (until every OsmDeployment settled, or the timeout)", formatDuration(h.Usage.Wall))
	md.row("CPU time", formatDuration(h.Usage.CPU))
	md.row("peak memory: heap+stack (RSS)", fmt.Sprintf("%s (%s)", formatBytes(h.Usage.PeakHeap), formatBytes(h.Usage.PeakRSS)))
	md.row("documented container limit", formatBytes(uint64(h.MemoryLimit)))
}
