# osmops: GitOps for Open Source MANO.

# Image of the manager, for docker-build, deploy and build-installer.
IMG ?= ghcr.io/osmops/osmops:latest
# Where build-installer writes the install manifests.
INSTALLER ?= dist/install.yaml
# Kubernetes version of the envtest API server (see hack/envtest.sh).
ENVTEST_K8S_VERSION ?= 1.36.3
CONTROLLER_TOOLS_VERSION ?= v0.21.0

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUBECTL ?= kubectl
CONTAINER_TOOL ?= docker
# Flags for `go test` (the unit tests, the e2e suite); for example GO_TEST_FLAGS=-race or
# GO_TEST_FLAGS='-run TestX -v'.
GO_TEST_FLAGS ?=
# Where the Ginkgo suites (internal/controller, test/e2e) write their JUnit reports.
JUNIT_DIR ?= $(CURDIR)/build/junit
# The envtest suite, run apart by the Ginkgo CLI (go.mod's tool, so of go.mod's Ginkgo version):
# only it spreads the specs over processes, each of which starts its own API server and manager
# in BeforeSuite, so that the specs' waits on the API server and the simulator overlap.
GINKGO_PKG = github.com/osmops/osmops/internal/controller
GINKGO ?= go tool ginkgo
# Processes of the envtest suite. On 2 cores shared with other builds (load 7-25) its 210 specs
# took 174 s in 2 processes, 167 s in 3, 198 s in 4 (311 s in one, `go test`): 3 by a nose.
GINKGO_PROCS ?= 3
# Flags of the Ginkgo CLI for the envtest suite; for example GINKGO_FLAGS=-race or
# GINKGO_FLAGS="--focus='Waves of a rollout' -v".
GINKGO_FLAGS ?=
# Parallel tests per package. The envtest tests mostly wait on the API server and the simulator,
# not on the CPU, so 8 at once finish about twice as fast as GOMAXPROCS (2) at once on 2 cores.
TEST_PARALLEL ?= 8

export GOTOOLCHAIN = local

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and RBAC from the kubebuilder markers (and copy them into the Helm chart).
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/..." paths="./internal/controller/..." paths="./internal/osmconn/..." output:crd:artifacts:config=config/crd/bases
	rm -f charts/osmops/crds/*.yaml
	cp config/crd/bases/*.yaml charts/osmops/crds/
	cp config/rbac/role.yaml charts/osmops/files/manager-role.yaml

.PHONY: generate
generate: controller-gen ## Generate the DeepCopy methods of the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet (also on the e2e tests).
	go vet ./...
	go vet -tags e2e ./test/...

.PHONY: lint
lint: ## Run golangci-lint (.golangci.yml: Kubebuilder's linters and the package graph's rules), the e2e tests included.
	"$$(hack/golangci-lint.sh)" config verify
	"$$(hack/golangci-lint.sh)" run

.PHONY: test
# The Ginkgo CLI writes both the merged coverage profile and the JUnit report into --output-dir;
# the profile then goes where `go test` wrote it, whether the specs passed or not.
test: manifests generate fmt vet envtest ## Run the unit tests, then the envtest suite (Ginkgo specs) against a real API server.
	KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" go test -parallel $(TEST_PARALLEL) $(GO_TEST_FLAGS) $$(go list ./... | grep -vxF '$(GINKGO_PKG)') -coverprofile cover.out
	KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" $(GINKGO) --procs=$(GINKGO_PROCS) --timeout=30m $(GINKGO_FLAGS) \
		--coverprofile=cover-envtest.out --output-dir=$(JUNIT_DIR) --junit-report=controller.xml \
		./$(patsubst github.com/osmops/osmops/%,%,$(GINKGO_PKG)) || status=$$?; \
		if [ -f $(JUNIT_DIR)/cover-envtest.out ]; then mv $(JUNIT_DIR)/cover-envtest.out cover-envtest.out; fi; \
		exit $${status:-0}

.PHONY: test-e2e
test-e2e: envtest flux-controllers ## Run the end-to-end suite (real Flux source-, notification- and kustomize-controller, Git server, operator, NBI simulator).
	KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" SOURCE_CONTROLLER="$$(hack/flux-controller.sh source-controller)" \
		NOTIFICATION_CONTROLLER="$$(hack/flux-controller.sh notification-controller)" \
		KUSTOMIZE_CONTROLLER="$$(hack/flux-controller.sh kustomize-controller)" \
		go test -tags e2e -timeout 30m -count=1 $(GO_TEST_FLAGS) ./test/e2e/... -ginkgo.junit-report=$(JUNIT_DIR)/e2e.xml

.PHONY: bench
bench: envtest ## Benchmark the operator against the osm CLI's request pattern (about 20 minutes on 2 cores); writes docs/benchmarks.md.
	go build -o $(LOCALBIN)/osm-nbi-sim ./cmd/osm-nbi-sim
	KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" go run ./cmd/osmops-bench --simulator=$(LOCALBIN)/osm-nbi-sim --out=docs/benchmarks.md

.PHONY: verify
verify: manifests generate fmt ## Fail when code generation or formatting leaves the tree dirty.
	@if [ -n "$$(git status --porcelain -- api config internal cmd test go.mod go.sum)" ]; then \
		echo "generated files are out of date; run 'make manifests generate fmt' and commit:"; \
		git status --porcelain -- api config internal cmd test go.mod go.sum; git --no-pager diff --stat; exit 1; \
	fi

##@ Demo

.PHONY: demo
demo: envtest source-controller ## Start the local demo in the background (API server, Flux, Git server, NBI simulator, operator); no internet.
	go build -o $(LOCALBIN)/manager ./cmd
	go build -o $(LOCALBIN)/osm-nbi-sim ./cmd/osm-nbi-sim
	KUBEBUILDER_ASSETS="$$(hack/envtest.sh)" go run ./cmd/osmops-demo up \
		--operator=$(LOCALBIN)/manager --simulator=$(LOCALBIN)/osm-nbi-sim --source-controller="$$(hack/flux-controller.sh source-controller)"

.PHONY: demo-stop
demo-stop: ## Stop the local demo and every process it started.
	go run ./cmd/osmops-demo down

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the manager, the NBI simulator and the osmops command line tool (also as bin/kubectl-osmops, for `kubectl osmops`).
	go build -o $(LOCALBIN)/manager ./cmd
	go build -o $(LOCALBIN)/osm-nbi-sim ./cmd/osm-nbi-sim
	go build -o $(LOCALBIN)/osmops ./cmd/osmops
	ln -sf osmops $(LOCALBIN)/kubectl-osmops

.PHONY: run
# The namespace where `make run` keeps the claims of NS instance names (in a cluster: the manager's).
RUNTIME_NAMESPACE ?= default
run: manifests generate fmt vet ## Run the manager against the cluster of the current kubeconfig.
	RUNTIME_NAMESPACE=$(RUNTIME_NAMESPACE) go run ./cmd

.PHONY: docker-build
docker-build: ## Build the manager's container image.
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager's container image.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: build-installer
build-installer: manifests generate ## Render INSTALLER (dist/install.yaml): CRDs, RBAC and the manager, for IMG.
	mkdir -p $(dir $(INSTALLER))
	cd config/manager && $(KUBECTL) kustomize . >/dev/null # fail early on a broken layer
	$(KUBECTL) kustomize config/default | sed "s#ghcr.io/osmops/osmops:latest#$(IMG)#" > $(INSTALLER)

.PHONY: release
release: ## Write dist/VERSION/ for a release VERSION=vX.Y.Z: install.yaml and the Helm chart, both with the image tag VERSION.
	@case "$(VERSION)" in v[0-9]*.[0-9]*.[0-9]*) ;; *) echo "usage: make release VERSION=vX.Y.Z"; exit 2 ;; esac
	@grep -q '^## $(VERSION)' CHANGELOG.md || { echo "CHANGELOG.md has no section '## $(VERSION)': rename 'Unreleased' first"; exit 2; }
	$(MAKE) build-installer IMG=ghcr.io/osmops/osmops:$(VERSION) INSTALLER=dist/$(VERSION)/install.yaml
	go run ./hack/chart-package --version=$(VERSION) --out=dist/$(VERSION) charts/osmops

##@ Deployment

.PHONY: install
install: manifests ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUBECTL) apply --server-side -k config/crd

.PHONY: uninstall
uninstall: manifests ## Remove the CRDs from the cluster of the current kubeconfig.
	$(KUBECTL) delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: build-installer ## Deploy the operator (IMG) to the cluster of the current kubeconfig.
	$(KUBECTL) apply --server-side -f $(INSTALLER)

.PHONY: undeploy
undeploy: ## Remove the operator from the cluster of the current kubeconfig.
	$(KUBECTL) delete --ignore-not-found -k config/default

##@ Tools

.PHONY: envtest
envtest: ## Provide kube-apiserver and etcd for envtest (download, or build once per user into ~/.cache/osmops).
	@hack/envtest.sh >/dev/null

.PHONY: source-controller
source-controller: ## Provide Flux's source-controller binary (built once per user into ~/.cache/osmops).
	@hack/flux-controller.sh source-controller >/dev/null

.PHONY: flux-controllers
flux-controllers: ## Provide Flux's source-, notification- and kustomize-controller binaries for the e2e suite (built once per user).
	@for name in source-controller notification-controller kustomize-controller; do hack/flux-controller.sh $$name >/dev/null || exit; done

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

.PHONY: golangci-lint
golangci-lint: ## Provide golangci-lint (built once per user from its Go module into ~/.cache/osmops).
	@hack/golangci-lint.sh >/dev/null
