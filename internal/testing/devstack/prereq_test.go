package devstack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRequirementMissing(t *testing.T) {
	dir := t.TempDir()
	executable := filepath.Join(dir, "tool")
	plain := filepath.Join(dir, "notes.txt")
	for path, mode := range map[string]os.FileMode{executable: 0o755, plain: 0o644} {
		if err := os.WriteFile(path, nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		req    requirement
		wantIn string // "" when the requirement is met
	}{
		{"executable", requirement{what: "tool", path: executable}, ""},
		{"folder", requirement{what: "CRDs", path: dir, folder: true}, ""},
		{"missing", requirement{what: "tool", path: filepath.Join(dir, "gone"), hint: "build it"}, "tool is missing (" + dir + "/gone): build it"},
		{"no path", requirement{what: "the operator", hint: "build it"}, "no path given for the operator: build it"},
		{"not executable", requirement{what: "tool", path: plain, hint: "chmod"}, "is not an executable file: chmod"},
		{"a folder for a program", requirement{what: "tool", path: dir}, "is not an executable file"},
		{"a file for a folder", requirement{what: "CRDs", path: plain, folder: true}, "is not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.missing()
			switch {
			case tt.wantIn == "" && err != nil:
				t.Errorf("missing() = %v, want nil", err)
			case tt.wantIn != "" && (err == nil || !strings.Contains(err.Error(), tt.wantIn)):
				t.Errorf("missing() = %v, want an error with %q", err, tt.wantIn)
			}
		})
	}
}

func TestStartNamesEveryMissingProgram(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	_, err := Start(t.Context(), Options{WorkDir: t.TempDir()})
	if err == nil {
		t.Fatal("Start succeeded without any program")
	}
	for _, want := range []string{"kube-apiserver is missing", "etcd is missing", "no path given for the operator",
		"no path given for the NBI simulator", "no path given for source-controller", "no path given for Flux's CRDs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

func TestStartNamesMissingOptionalFluxControllers(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	missing := filepath.Join(t.TempDir(), "notification-controller")
	_, err := Start(t.Context(), Options{WorkDir: t.TempDir(), NotificationControllerBinary: missing})
	if err == nil {
		t.Fatal("Start succeeded without any program")
	}
	for _, want := range []string{"notification-controller is missing (" + missing + "): run `hack/flux-controller.sh notification-controller`",
		"notification-controller's CRDs is missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), KustomizeControllerName) {
		t.Errorf("error names kustomize-controller, which was not asked for:\n%v", err)
	}
}
