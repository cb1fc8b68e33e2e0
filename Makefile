# The two commands a platform engineer needs (see README):
#   make demo   plan the root Pulumi project (a tuned AKS cluster) on its bundled config, offline (no cloud account)
#   make test   install what the tests need, lint, run every test (Python and Go), then list every skipped test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# One virtualenv, the one the root Pulumi.yaml names: `make demo` installs the library with only its `pulumi` extra
# (what `wirespeed plan` and `pulumi up` import, ~400 MB), `make test` adds the development tools to it later.
DEMO_STAMP := $(VENV)/.installed-pulumi
STAMP      := $(VENV)/.installed-dev
RESULTS    := build/test-results

# uv (PyPI) does every Python install: resolving and downloading in parallel, it builds the demo's virtualenv in
# seconds where pip took minutes, and it shows its progress (bench/setup/RESULTS.md). A uv on PATH is used as it is;
# without one this release is installed from PyPI into .tools/uv first (pip in a virtualenv: nothing system-wide).
UV_VERSION := 0.13.9
TOOLS_UV   := $(CURDIR)/.tools/uv/bin/uv
UV         ?= $(or $(shell command -v uv 2>/dev/null),$(TOOLS_UV))
UV_NEEDED  := $(if $(filter $(TOOLS_UV),$(UV)),$(TOOLS_UV))
# Python is the machine's (README: Python 3.11+); uv must never fetch an interpreter of its own.
export UV_PYTHON_DOWNLOADS := never

.PHONY: demo test venv wheel lint test-python test-go test-terraform system-deps agent image push apiserver engine clean regen

demo: $(DEMO_STAMP)
	@echo '==> wirespeed plan . (the root project under the Pulumi SDK'"'"'s mocks: no Pulumi CLI, no cloud account)'
	$(BIN)/wirespeed plan .

$(TOOLS_UV):
	@echo '==> no uv on PATH: installing uv $(UV_VERSION) from PyPI into .tools/uv'
	$(PYTHON) -m venv .tools/uv
	.tools/uv/bin/pip install --disable-pip-version-check --progress-bar on uv==$(UV_VERSION)

$(BIN)/python: | $(UV_NEEDED)
	$(UV) venv --python $(PYTHON) $(VENV)

# --compile-bytecode: uv installs no .pyc files unless asked (pip compiles by default), and where
# PYTHONDONTWRITEBYTECODE is set (CI runners, container images) Python never writes them, so every
# `wirespeed plan` compiled the SDK modules it imports from source: ~3 s of CPU a plan (bench/plan/RESULTS.md).
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	@echo '==> installing wirespeed and the Pulumi SDKs it is tested against into $(VENV) (first time: ~90 MB from PyPI)'
	$(UV) pip install --python $(BIN)/python --compile-bytecode -e '.[pulumi]'
	@touch $@

venv: $(STAMP)
# The project's own modules too (an editable install's source is outside site-packages).
$(STAMP): pyproject.toml | $(BIN)/python
	@echo '==> installing wirespeed with every extra and the development tools into $(VENV)'
	$(UV) pip install --python $(BIN)/python --compile-bytecode -e '.[dev]'
	$(BIN)/python -m compileall -q components
	@touch $@

# The library's wheel in dist/: for an internal package index, or `pip install --find-links dist -r
# examples/<name>/requirements.txt` from a checkout (examples install the released library, never this folder).
wheel: | $(UV_NEEDED)
	UV=$(UV) ./scripts/build-wheel.sh dist

system-deps:
	./scripts/install-system-deps.sh

# Every suite runs even when an earlier one fails (-k), then scripts/testreport.py lists every skipped test of
# pytest and the Go suites with its reason; under CI=true a skip not in tests/allowed-skips.json fails the run.
test: system-deps
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	@status=0; $(MAKE) --no-print-directory -k lint test-python test-go test-terraform || status=$$?; \
		$(PYTHON) scripts/testreport.py summary $(addprefix $(RESULTS)/,pytest.xml go-agent.json go-agent-image.json go-terratest.json) \
		|| status=1; exit $$status

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	cd agent && go vet ./...
	@cd agent && out=$$(gofmt -l .) && if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	cd agent/image && go vet ./...
	cd tests/terratest && go vet ./...
	@cd tests/terratest && out=$$(gofmt -l .) && if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

# The API server tests (tests/apiserver.py) run the agent binary and a kube-apiserver built from source, the
# engine tests (tests/pulumi_cli.py) the Pulumi CLI built from source. UV is the uv the examples' install test uses
# (tests/examples/test_examples_copied.py).
test-python: $(STAMP) agent apiserver engine
	UV=$(UV) $(BIN)/pytest --junitxml=$(RESULTS)/pytest.xml

# The static agent binary (what the image ships) is built first, so a broken build fails CI on its own line.
# scripts/testreport.py runs `go test -json`, prints what plain `go test` would and keeps the events for the summary.
# -timeout 30m: go test's default of 10 min per package cut the terratest package short on a busy 2-core machine.
test-go: agent
	cd agent && $(PYTHON) ../scripts/testreport.py go ../$(RESULTS)/go-agent.json -count=1 -timeout 30m ./...
	cd agent/image && $(PYTHON) ../../scripts/testreport.py go ../../$(RESULTS)/go-agent-image.json -count=1 ./...
	$(MAKE) -C agent fuzz

# The Terraform modules with the real terraform binary (tests/terratest, Go): always the provider-free parts;
# the provider-backed plans and applies when the plugin mirror has the provider (modules/README.md).
test-terraform: $(STAMP)
	cd tests/terratest && $(PYTHON) ../../scripts/testreport.py go ../../$(RESULTS)/go-terratest.json -count=1 -timeout 30m ./...

agent:
	$(MAKE) -C agent build

# The agent's OCI image (linux/amd64 + linux/arm64) without a container engine, into build/agent-image/ (agent/Makefile).
# `make push IMAGE=registry.example.com/wirespeed-agent:v0.1.0` pushes what it built.
image:
	$(MAKE) -C agent image IMAGE='$(IMAGE)'

push:
	$(MAKE) -C agent push IMAGE='$(IMAGE)'

# kube-apiserver for the tests: ~5 min the first time, seconds once the Go build cache has it (builders/apiserver/build.sh).
apiserver:
	./builders/apiserver/build.sh

# The Pulumi CLI, YAML language host and kubernetes provider for the engine tests, at the versions
# builders/pulumi/versions pins, into build/pulumi/bin: the first time on 2 cores ~10 min of CPU for the CLI and host
# and ~12.5 min (4.5 GB of memory) for the provider, nothing once built (bench/setup/RESULTS.md).
engine:
	./scripts/build-pulumi-engine.sh

# Regenerate committed artifacts after changing the models, sizing, the agent's RBAC, the manifests, the alert rules
# or dashboard, the components' arguments or outputs (the provider's schema, and from it the SDKs in sdk/: Go needed),
# the pinned moto, or a number with one home (wirespeed.numbers writes its copies in Terraform, Pulumi.yaml and the
# docs).
regen: $(STAMP)
	$(BIN)/wirespeed profile schema > components/wirespeed/data/profile.schema.json
	cp components/wirespeed/data/profile.schema.json agent/internal/profile/profile.schema.json
	$(BIN)/python -m wirespeed.sizing.snat_limits > components/wirespeed/data/snat_limits.json
	cp components/wirespeed/data/snat_limits.json agent/internal/profile/snat_limits.json
	cp components/wirespeed/data/message_table.json agent/internal/profile/message_table.json
	cp components/wirespeed/data/nic_drivers.json agent/internal/rings/nic_drivers.json
	cp agent/internal/nodestatus/rbac.yaml components/wirespeed/data/agent-rbac.yaml
	cp agent/internal/nodestatus/own-node-policy.yaml components/wirespeed/data/agent-own-node-policy.yaml
	$(BIN)/python -m wirespeed.profiles
	$(BIN)/python -m wirespeed.catalog.generate_azure
	$(BIN)/python -m wirespeed.catalog.generate_aws
	$(BIN)/python -m wirespeed.azure.docs
	$(BIN)/python -m wirespeed.terraform
	$(BIN)/python -m wirespeed.numbers
	$(BIN)/python -m wirespeed.tuning_paths
	$(BIN)/python -m wirespeed.rule_catalog
	$(BIN)/python -m wirespeed.provider schema > provider/schema.json
	./scripts/gen-sdks.sh
	cd tests/terratest && go run ./cmd/tfdocs
	cd agent && go test -count=1 ./internal/metrics -run TestREADMEListsEveryMetric -update
	UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/manifests/test_render_node_tuning.py tests/manifests/test_alerts.py tests/manifests/test_dashboard.py
	UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/userdata/test_userdata_script.py tests/userdata/test_userdata_mime.py tests/components/test_aws_karpenter.py \
		tests/userdata/test_userdata_bottlerocket.py -m "not netns" \
		tests/components/test_azure_nap.py
	$(BIN)/python tests/fixtures/terraform/handwritten.py
	UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/check/test_check_cli.py tests/examples/test_examples_aks.py \
		tests/sizing/test_size_by_workload.py \
		tests/sizing/test_prove_from_prometheus.py \
		tests/program/test_plan_program_golden.py tests/check/test_check_terraform.py tests/check/test_real_corpus.py

clean:
	rm -rf $(VENV) .tools build dist agent/bin builders/apiserver/bin
