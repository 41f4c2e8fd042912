package devstack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/osmops/osmops/internal/testing/testenv"
)

// requirement is a file the stack needs, with how to get it when it is missing.
type requirement struct {
	what, path, hint string
	folder           bool
}

// requirements lists the programs and folders of o with the way to provide each.
func requirements(o Options, gitExecPath string) []requirement {
	r := []requirement{
		{what: "git-http-backend", path: filepath.Join(gitExecPath, "git-http-backend"), hint: "install git (Debian's git package ships it in /usr/lib/git-core)"},
		{what: "the operator", path: o.OperatorBinary, hint: "build it: `go build -o bin/manager ./cmd` (make build)"},
		{what: "the NBI simulator", path: o.SimulatorBinary, hint: "build it: `go build -o bin/osm-nbi-sim ./cmd/osm-nbi-sim` (make build)"},
		{what: "source-controller", path: o.SourceControllerBinary, hint: "run `make source-controller` (hack/flux-controller.sh source-controller)"},
		{what: "Flux's CRDs", path: o.SourceControllerCRDs, folder: true, hint: "hack/flux-controller.sh puts them in crd/ beside the binary"},
	}
	for _, c := range o.optionalFluxControllers() {
		hint := "run `hack/flux-controller.sh " + c.name + "`"
		r = append(r, requirement{what: c.name, path: c.binary, hint: hint},
			requirement{what: c.name + "'s CRDs", path: crdDir(c.binary), folder: true, hint: hint})
	}
	return r
}

// fluxController is an optional Flux controller of the stack.
type fluxController struct{ name, binary string }

// optionalFluxControllers lists the optional controllers o asks for.
func (o Options) optionalFluxControllers() []fluxController {
	var out []fluxController
	for _, c := range []fluxController{
		{NotificationControllerName, o.NotificationControllerBinary},
		{KustomizeControllerName, o.KustomizeControllerBinary},
	} {
		if c.binary != "" {
			out = append(out, c)
		}
	}
	return out
}

// optionalFluxCRDs are the CRD folders of the optional controllers o asks for.
func (o Options) optionalFluxCRDs() []string {
	var dirs []string
	for _, c := range o.optionalFluxControllers() {
		dirs = append(dirs, crdDir(c.binary))
	}
	return dirs
}

// crdDir is where hack/flux-controller.sh puts a controller's CRDs: crd/ beside its binary.
func crdDir(binary string) string { return filepath.Join(filepath.Dir(binary), "crd") }

// envtestRequirements are the binaries envtest runs, from assetsDir.
func envtestRequirements(assetsDir string) []requirement {
	const hint = "run `make envtest` (hack/envtest.sh)"
	return []requirement{
		{what: "kube-apiserver", path: filepath.Join(assetsDir, "kube-apiserver"), hint: hint},
		{what: "etcd", path: filepath.Join(assetsDir, "etcd"), hint: hint},
	}
}

// missing says what is wrong with r, or nothing.
func (r requirement) missing() error {
	if r.path == "" {
		return fmt.Errorf("no path given for %s: %s", r.what, r.hint)
	}
	info, err := os.Stat(r.path)
	switch {
	case err != nil:
		return fmt.Errorf("%s is missing (%s): %s", r.what, r.path, r.hint)
	case r.folder && !info.IsDir():
		return fmt.Errorf("%s: %s is not a folder: %s", r.what, r.path, r.hint)
	case !r.folder && (info.IsDir() || info.Mode()&0o111 == 0):
		return fmt.Errorf("%s: %s is not an executable file: %s", r.what, r.path, r.hint)
	}
	return nil
}

// checkPrerequisites finds git and the envtest binaries and checks every program and folder the
// stack runs, naming each one that is missing and how to get it. It returns the path of
// git-http-backend.
func checkPrerequisites(o Options) (gitBackend string, err error) {
	gitExecPath, err := gitExecPath()
	if err != nil {
		return "", err
	}
	checks := requirements(o, gitExecPath)
	assetsDir, assetsErr := testenv.BinaryAssetsDir()
	if assetsErr == nil {
		checks = append(checks, envtestRequirements(assetsDir)...)
	}
	errs := []error{assetsErr}
	for _, r := range checks {
		errs = append(errs, r.missing())
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return filepath.Join(gitExecPath, "git-http-backend"), nil
}

// gitExecPath returns the folder of git's helper programs, such as git-http-backend.
func gitExecPath() (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", errors.New("git is not installed: install it (Debian: apt-get install git)")
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return "", fmt.Errorf("asking git for its exec path: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
