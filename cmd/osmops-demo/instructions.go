package main

import (
	"strings"
	"text/template"
	"time"
)

// instructionsTemplate is what `up` prints once the demo runs. Every command is meant to be
// copied as it is.
var instructionsTemplate = template.Must(template.New("instructions").Parse(
	`The osmops demo runs in the background (supervisor pid {{.Info.SupervisorPID}}; state and logs in {{.Info.WorkDir}}).

  export KUBECONFIG={{.Info.Kubeconfig}}
  kubectl get osmd -n {{.Namespace}} -w      # watch the OsmDeployments (Ctrl-C stops watching)

  Demo repository: {{.Info.RepoURL}}
  NBI simulator:   {{.Info.SimulatorURL}}   (what OSM holds: curl -s {{.Info.SimulatorURL}}/sim/v1/state)

Three OSM sites, each an NBI simulator of its own, apply the demo repository in waves
(docs/rollouts.md):
{{range .Info.Sites}}
  {{printf "%-10s" .Name}}  {{.SimulatorURL}}  {{if .After}}once {{.After}} applied the same commit and was Ready on it for {{$.BakeTime}}{{else}}the lab: at once{{end}}
{{- end}}

so each push below walks through the sites in about a minute: watch the REVISION column change
site after site, and the sites that wait say so (STATUS WaitingForWave).

Things to try, in a clone of the demo repository:

  git clone {{.Info.RepoURL}} && cd {{.Repository}}
  git config user.name demo && git config user.email demo@example.invalid

1. Change a KDU value: the operator upgrades the KDU of the NS instance ldap.
     sed -i 's/replicaCount: "1"/replicaCount: "2"/' deploy/ldap.osmops.yaml
     git commit -am 'Scale LDAP to 2 replicas' && git push

2. Move one KDU of the NS of two KNFs, ldap-stack, to another chart version: the operator
   upgrades that KDU alone.
     sed -i 's|stable/openldap:1.2.7|stable/openldap:1.2.8|' deploy/ldap-stack.osmops.yaml
     git commit -am 'LDAP chart 1.2.8' && git push

3. Add a second NS instance: the operator creates ldap2.
     sed 's/^name: ldap$/name: ldap2/' deploy/ldap.osmops.yaml > deploy/ldap2.osmops.yaml
     git add deploy/ldap2.osmops.yaml && git commit -m 'Add the NS instance ldap2' && git push

4. Push a broken file: the OsmDeployment {{.First}} stalls, names the file and line, and leaves
   OSM alone; the later sites halt (RolloutHalted) on the commit before.
     printf 'kind: NsInstance\nname: broken\n' > deploy/broken.osmops.yaml
     git add deploy/broken.osmops.yaml && git commit -m 'Add a broken file' && git push
   Then fix it, and the fix walks through the sites:
     git rm -q deploy/broken.osmops.yaml && git commit -m 'Remove the broken file' && git push

5. Make the OSM of {{.Failing.Name}} fail the next KDU upgrade, and push a change: {{.First}} applies it,
   {{.Failing.Name}} fails it (OperationFailed), the sites after it halt (RolloutHalted) on the commit before.
     curl -s -X POST {{.Failing.SimulatorURL}}/sim/v1/operation-failures -d '{"operation":"upgrade","nsName":"ldap","count":1}'
     sed -i 's/replicaCount: "[0-9]*"/replicaCount: "3"/' deploy/ldap.osmops.yaml
     git commit -am 'Scale LDAP to 3 replicas' && git push
   Push the fix (here, any next change): the rollout starts again at {{.First}} and completes.
     sed -i 's/replicaCount: "[0-9]*"/replicaCount: "4"/' deploy/ldap.osmops.yaml
     git commit -am 'Scale LDAP to 4 replicas' && git push

Stop the demo with: make demo-stop
`))

// instructions renders what to do with the running demo described by info.
func instructions(info demoInfo) string {
	// The site that fails in the 5th step: the second, so that the first applies the change
	// and a later one halts.
	var failing demoSite
	if len(info.Sites) > 1 {
		failing = info.Sites[1]
	}
	var text strings.Builder
	err := instructionsTemplate.Execute(&text, struct {
		Info                         demoInfo
		Namespace, Repository, First string
		Failing                      demoSite
		BakeTime                     time.Duration
	}{info, demoNamespace, demoRepository, demoRepository, failing, rolloutBakeTime})
	if err != nil {
		// The template and its data are fixed: a failure is a bug in this file.
		panic(err)
	}
	return text.String()
}
