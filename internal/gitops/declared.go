package gitops

// MaxDeploymentFileBytes is the largest deployment file read, as Load reads them.
const MaxDeploymentFileBytes = maxYAMLFileBytes

// DeclaredParams parses data as the deployment file file, as Load does but without
// substitution or values from Kubernetes, and returns the canonical JSON of the Helm values
// each KDU declares there (ParamsJSON), by "member/kdu": what Git itself holds. Nil when data
// is not a valid deployment file of the NS instance name.
func DeclaredParams(file string, data []byte, name string) map[string]string {
	if len(data) > MaxDeploymentFileBytes {
		return nil
	}
	ns, _, problems := parseDeploymentFile(file, data)
	if len(problems) > 0 || ns.Name != name {
		return nil
	}
	params := map[string]string{}
	for _, vnf := range ns.Members() {
		for _, kdu := range vnf.KDUs {
			params[vnf.MemberVnfIndex+"/"+kdu.Name] = ns.ParamsJSON(vnf.MemberVnfIndex, kdu)
		}
	}
	return params
}
