# The two commands a platform engineer needs (see README):
#   make demo   plan the root Pulumi project (a tuned AKS cluster) on its bundled config, offline (no cloud account)
#   make test   install what the tests need, lint, and run every test (Python and Go)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint test-python test-go test-terraform system-deps agent apiserver clean regen

demo: $(STAMP)
	$(BIN)/wirespeed plan .

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

system-deps:
	./scripts/install-system-deps.sh

test: system-deps lint test-python test-go test-terraform

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	cd agent && go vet ./...
	@cd agent && out=$$(gofmt -l .) && if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	cd tests/terratest && go vet ./...
	@cd tests/terratest && out=$$(gofmt -l .) && if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

# The API server tests (tests/apiserver.py) run the agent binary and a kube-apiserver built from source.
test-python: $(STAMP) agent apiserver
	$(BIN)/pytest

# The static agent binary (what the image ships) is built first, so a broken build fails CI on its own line.
test-go: agent
	cd agent && go test -count=1 ./...
	$(MAKE) -C agent fuzz FUZZTIME=10s

# The Terraform modules with the real terraform binary (tests/terratest, Go): always the provider-free parts;
# the provider-backed plans and applies when the plugin mirror has the provider (modules/README.md).
test-terraform: $(STAMP)
	cd tests/terratest && go test -count=1 ./...

agent:
	$(MAKE) -C agent build

# kube-apiserver for the tests: ~5 min the first time, seconds once the Go build cache has it (test/apiserver/build.sh).
apiserver:
	./test/apiserver/build.sh

# Regenerate committed artifacts after changing the models, sizing, the agent's RBAC, the manifests, the alert rules
# or dashboard, or the pinned moto.
regen: $(STAMP)
	$(BIN)/python -c 'from wirespeed.profile import render_schema; import sys; sys.stdout.write(render_schema())' \
		> components/wirespeed/data/profile.schema.json
	cp components/wirespeed/data/profile.schema.json agent/internal/profile/profile.schema.json
	$(BIN)/python -c 'from wirespeed.sizing.snat_limits import render_limits; import sys; sys.stdout.write(render_limits())' \
		> components/wirespeed/data/snat_limits.json
	cp components/wirespeed/data/snat_limits.json agent/internal/profile/snat_limits.json
	cp components/wirespeed/data/nic_drivers.json agent/internal/rings/nic_drivers.json
	$(BIN)/python -m wirespeed.profiles
	$(BIN)/python -m wirespeed.catalog.generate_aws
	$(BIN)/python -m wirespeed.azure.docs
	$(BIN)/python -m wirespeed.terraform
	cd tests/terratest && go run ./cmd/tfdocs
	cp agent/internal/nodestatus/rbac.yaml components/wirespeed/data/agent-rbac.yaml
	UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/test_render_node_tuning.py tests/test_alerts.py tests/test_dashboard.py
	UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/test_userdata_script.py tests/test_userdata_mime.py tests/test_aws_karpenter.py \
		tests/test_azure_nap.py
	$(BIN)/python tests/fixtures/terraform/handwritten.py
	UPDATE_GOLDEN=1 $(BIN)/pytest -q tests/test_check_cli.py tests/test_policy_pack.py tests/test_examples_aks.py \
		tests/test_plan_program_golden.py tests/test_check_terraform.py

clean:
	rm -rf $(VENV) agent/bin test/apiserver/bin
