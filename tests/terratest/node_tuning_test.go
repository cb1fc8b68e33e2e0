package terratest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// modules/node-tuning: the objects it computes are the renderer's (tests/vectors/node_tuning.json, written by
// python -m wirespeed.terraform from wirespeed.manifests, the source of `wirespeed render node-tuning`), every
// input the renderer refuses is refused by the module's own validation rules, and, with the kubernetes provider in
// the mirror, the module validates, its terraform test (mock provider) passes and its example plans.

var nodeTuningModule = filepath.Join(tftest.Root(), "modules", "node-tuning")

// The harness exposes what main.tf would hand to kubernetes_manifest, as JSON so Go compares it with the vectors.
const nodeTuningHarness = `
output "objects" {
  value = jsonencode(local.objects)
}

output "object_keys" {
  value = local.object_keys
}

output "applied" {
  value = jsonencode({ namespace = local.namespace_object, admission_policy = local.policy_objects, others = local.rest_objects })
}

output "profile_checksums" {
  value = { for name, ds in local.daemon_sets : name => ds.spec.template.metadata.annotations[local.wirespeed.checksum_annotation] }
}
`

type nodeTuningCase struct {
	Name     string            `json:"name"`
	Inputs   map[string]any    `json:"inputs"`
	Expected []map[string]any  `json:"expected"`
	Checksum map[string]string `json:"checksums"`
	Errors   []nodeTuningError `json:"errors"`
}

type nodeTuningError struct {
	Field    string `json:"field"`
	Variable string `json:"variable"`
}

func nodeTuningVectors(t *testing.T) []nodeTuningCase {
	t.Helper()
	return tftest.Vectors[nodeTuningCase](t, "node_tuning.json")
}

// nodeTuningRenderedJSON is the renderer's JSON output of the vectors' objects_json case.
func nodeTuningRenderedJSON(t *testing.T) string {
	t.Helper()
	for _, c := range nodeTuningVectors(t) {
		if text, ok := c.Inputs["objects_json"].(string); ok {
			return text
		}
	}
	t.Fatal("tests/vectors/node_tuning.json has no objects_json case")
	return ""
}

// nodeTuningPure is a PureHarness of modules/node-tuning with inputs as its tfvars, initialised.
func nodeTuningPure(t *testing.T, inputs map[string]any) *tfexec.Terraform {
	t.Helper()
	dir := tftest.PureHarness(t, nodeTuningModule, nodeTuningHarness)
	vars, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	tftest.WriteVars(t, dir, vars)
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	return tf
}

// nodeTuningPlanError plans the harness and returns Terraform's error on one line ("" when the plan succeeds).
func nodeTuningPlanError(t *testing.T, inputs map[string]any) string {
	t.Helper()
	tf := nodeTuningPure(t, inputs)
	var stderr bytes.Buffer
	tf.SetStderr(&stderr)
	if _, err := tf.Plan(context.Background()); err != nil {
		return tftest.OneLine(stderr.String() + " " + err.Error())
	}
	return ""
}

func TestNodeTuningObjectsAreTheRenderers(t *testing.T) {
	for _, c := range nodeTuningVectors(t) {
		if c.Expected == nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			tf := nodeTuningPure(t, c.Inputs)
			if err := tf.Apply(context.Background()); err != nil {
				t.Fatalf("terraform apply: %v", err)
			}
			outputs, err := tf.Output(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var text string
			if err := json.Unmarshal(outputs["objects"].Value, &text); err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.Expected) {
				t.Fatalf("%d objects, the renderer gives %d", len(got), len(c.Expected))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], c.Expected[i]) {
					gotJSON, _ := json.MarshalIndent(got[i], "", "  ")
					wantJSON, _ := json.MarshalIndent(c.Expected[i], "", "  ")
					t.Errorf("object %d differs from the renderer's\ngot:  %s\nwant: %s", i, gotJSON, wantJSON)
				}
			}

			var keys []string
			if err := json.Unmarshal(outputs["object_keys"].Value, &keys); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for i, key := range keys {
				meta := c.Expected[i]["metadata"].(map[string]any)
				want := c.Expected[i]["kind"].(string) + "/" + meta["name"].(string)
				if ns, ok := meta["namespace"].(string); ok {
					want = c.Expected[i]["kind"].(string) + "/" + ns + "/" + meta["name"].(string)
				}
				if key != want || seen[key] {
					t.Errorf("object_keys[%d] = %q, want %q once", i, key, want)
				}
				seen[key] = true
			}

			// What main.tf hands to kubernetes_manifest: the Namespace alone, the admission policy objects in a step
			// of their own before the rest, every other object under its key.
			var appliedText string
			if err := json.Unmarshal(outputs["applied"].Value, &appliedText); err != nil {
				t.Fatal(err)
			}
			var applied struct {
				Namespace       map[string]any            `json:"namespace"`
				AdmissionPolicy map[string]map[string]any `json:"admission_policy"`
				Others          map[string]map[string]any `json:"others"`
			}
			if err := json.Unmarshal([]byte(appliedText), &applied); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(applied.Namespace, c.Expected[0]) || c.Expected[0]["kind"] != "Namespace" {
				t.Errorf("kubernetes_manifest.namespace gets %v, not the renderer's Namespace", applied.Namespace["metadata"])
			}
			if got := len(applied.AdmissionPolicy) + len(applied.Others); got != len(c.Expected)-1 {
				t.Errorf("kubernetes_manifest.admission_policy and .object get %d objects, want %d", got, len(c.Expected)-1)
			}
			for i, key := range keys[1:] {
				want, kind := c.Expected[i+1], c.Expected[i+1]["kind"].(string)
				resource, got := "object", applied.Others[key]
				if strings.HasPrefix(kind, "ValidatingAdmissionPolicy") {
					resource, got = "admission_policy", applied.AdmissionPolicy[key]
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("kubernetes_manifest.%s[%q] is not the renderer's object %d", resource, key, i+1)
				}
			}

			// The checksums the renderer computes from each profile's ConfigMap text, read back from the DaemonSets.
			var checksums map[string]string
			if err := json.Unmarshal(outputs["profile_checksums"].Value, &checksums); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(checksums, c.Checksum) {
				t.Errorf("profile_checksums = %v, the renderer's are %v", checksums, c.Checksum)
			}
		})
	}
}

// Every input the renderer refuses, the module refuses too, naming each variable the renderer's fields belong to.
func TestNodeTuningRefusesWhatTheRendererRefuses(t *testing.T) {
	for _, c := range nodeTuningVectors(t) {
		if c.Errors == nil {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			msg := nodeTuningPlanError(t, c.Inputs)
			if msg == "" {
				t.Fatalf("terraform plan accepted %v, which the renderer refuses (%v)", c.Inputs, c.Errors)
			}
			for _, e := range c.Errors {
				if !strings.Contains(msg, "Invalid value for variable") || !strings.Contains(msg, e.Variable+": ") {
					t.Errorf("the error does not name %s (the renderer's field %s): %s", e.Variable, e.Field, msg)
				}
			}
		})
	}
}

// One case per validation rule, with the exact message a user reads.
func TestNodeTuningValidationMessages(t *testing.T) {
	cases := []struct {
		name   string
		inputs map[string]any
		want   string
	}{
		{"no_profiles", map[string]any{"profiles": []string{}},
			"profiles: [] is not allowed; allowed: at least one profile (built-in: balanced, throughput)."},
		{"unknown_profiles", map[string]any{"profiles": []string{"throughput", "turbo", "ingest"}},
			`profiles: ["turbo","ingest"] is not allowed; allowed: built-in profile names (balanced, throughput).`},
		{"duplicate_profile", map[string]any{"profiles": []string{"throughput", "balanced", "throughput"}},
			`profiles: ["throughput"] is not allowed more than once; allowed: each profile name at most once ` +
				`(two DaemonSets selecting one wirespeed.io/profile label would fight over the same nodes).`},
		{"image_without_tag", map[string]any{"image": "ghcr.io/wirespeed-io/wirespeed-agent"},
			`image: "ghcr.io/wirespeed-io/wirespeed-agent" is not allowed; allowed: an image reference with a tag ` +
				`or digest, e.g. REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:HEX.`},
		{"namespace_not_a_label", map[string]any{"namespace": "Net_Tuning"},
			`namespace: "Net_Tuning" is not allowed; allowed: an RFC 1123 label: lowercase letters, digits and ` +
				`'-', 1-63 characters.`},
		{"namespace_shared", map[string]any{"namespace": "kube-system"},
			`namespace: "kube-system" is not allowed; allowed: a namespace of the agent's own, not one shared ` +
				`with other workloads (default, kube-node-lease, kube-public, kube-system).`},
		{"objects_json_not_the_renderers", map[string]any{"objects_json": `[{"kind": "ConfigMap"}]`},
			`objects_json: "[{\"kind\": \"ConfigMap\"}]"... is not allowed; allowed: the JSON array ` +
				"`wirespeed render node-tuning --output json` prints (a Namespace first, every object labelled " +
				"app.kubernetes.io/part-of=wirespeed)."},
		{"objects_json_with_other_inputs", map[string]any{"objects_json": nodeTuningRenderedJSON(t), "profiles": []string{"balanced"}, "alerts": true},
			"objects_json: given with profiles, alerts is not allowed; allowed: objects_json alone (pass those to " +
				"wirespeed render node-tuning instead)."},
		{"objects_json_with_outbound", map[string]any{"objects_json": nodeTuningRenderedJSON(t), "outbound": map[string]any{"kind": "aws-nat-gateway", "public_ips": 1}},
			"objects_json: given with outbound is not allowed; allowed: objects_json alone (pass those to " +
				"wirespeed render node-tuning instead)."},
		{"outbound_kind", map[string]any{"outbound": map[string]any{"kind": "azure-firewall", "public_ips": 1}},
			`outbound: kind "azure-firewall" is not allowed; allowed: one of "aws-nat-gateway", "azure-load-balancer", ` +
				`"azure-nat-gateway".`},
		{"outbound_other_kind_s_sizing", map[string]any{"outbound": map[string]any{"kind": "azure-load-balancer", "allocated_ports_per_node": 1024, "public_ips": 2}},
			`outbound: public_ips 2 is not allowed; allowed: only with kind "azure-nat-gateway" or "aws-nat-gateway".`},
		{"outbound_sizing_required", map[string]any{"outbound": map[string]any{"kind": "aws-nat-gateway"}},
			`outbound: public_ips is required with kind "aws-nat-gateway".`},
		{"outbound_ports", map[string]any{"outbound": map[string]any{"kind": "azure-load-balancer", "allocated_ports_per_node": 1020}},
			"outbound: allocated_ports_per_node 1020 is not allowed; allowed: must be a multiple of 8 between 8 and 64,000."},
		// public_ips past its kind's bound: an Azure NAT gateway's 16, an AWS regional gateway's 32 per AZ.
		{"outbound_ips_azure", map[string]any{"outbound": map[string]any{"kind": "azure-nat-gateway", "public_ips": 17}},
			`outbound: public_ips 17 is not allowed; allowed: must be between 1 and 16 with kind "azure-nat-gateway".`},
		{"outbound_ips_aws", map[string]any{"outbound": map[string]any{"kind": "aws-nat-gateway", "public_ips": 33}},
			`outbound: public_ips 33 is not allowed; allowed: must be between 1 and 32 with kind "aws-nat-gateway".`},
		{"outbound_cidrs", map[string]any{"outbound": map[string]any{"kind": "aws-nat-gateway", "public_ips": 1, "exclude_cidrs": []string{"10.0.0.0/8", "010.0.0.0/8", "fd00::/129"}}},
			`outbound: exclude_cidrs ["010.0.0.0/8","fd00::/129"] is not allowed; allowed: each an IPv4 or IPv6 CIDR such ` +
				"as 10.244.0.0/16 or fd00::/8, at most 256 of them."},
		{"objects_json_without_admission_policy", map[string]any{"objects_json": nodeTuningRenderedJSON(t), "admission_policy": false},
			"objects_json: given with admission_policy is not allowed; allowed: objects_json alone (pass those to " +
				"wirespeed render node-tuning instead)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := nodeTuningPlanError(t, c.inputs)
			if !strings.Contains(msg, c.want) {
				t.Fatalf("want the message\n  %s\ngot\n  %s", c.want, msg)
			}
		})
	}
}

// With the provider: the whole module (main.tf, outputs.tf, versions.tf) validates.
func TestNodeTuningValidatesWithTheKubernetesProvider(t *testing.T) {
	tftest.NeedProvider(t, "kubernetes")
	tf := tftest.New(t, nodeTuningCopy(t))
	tftest.Init(t, tf)
	out, err := tf.Validate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !out.Valid {
		t.Fatalf("terraform validate: %+v", out.Diagnostics)
	}
}

// With the provider: modules/node-tuning/tests/*.tftest.hcl under mock_provider "kubernetes" (no cluster).
func TestNodeTuningTerraformTestUnderAMockKubernetesProvider(t *testing.T) {
	tftest.NeedProvider(t, "kubernetes")
	tf := tftest.New(t, nodeTuningCopy(t))
	tftest.Init(t, tf)
	var out bytes.Buffer
	if err := tf.Test(context.Background(), &out); err != nil {
		t.Fatalf("terraform test: %v\n%s", err, out.String())
	}
}

// With the provider and a cluster: kubernetes_manifest reads the cluster's OpenAPI schema at plan time, so the
// example plans against WIRESPEED_KUBECONFIG (`python tests/apiserver.py` prints one for a local kube-apiserver).
func TestNodeTuningExamplePlansAgainstACluster(t *testing.T) {
	tftest.NeedProvider(t, "kubernetes")
	kubeconfig := os.Getenv("WIRESPEED_KUBECONFIG")
	if kubeconfig == "" {
		tftest.Require(t, "needs WIRESPEED_KUBECONFIG: kubernetes_manifest plans against a cluster (python tests/apiserver.py serves one)")
	}
	tree := nodeTuningCopyTree(t)
	example := filepath.Join(tree, "node-tuning", "examples", "basic")
	tf := tftest.New(t, example)
	tftest.Init(t, tf)
	if _, err := tf.Plan(context.Background(), tfexec.Var("kubeconfig="+kubeconfig)); err != nil {
		t.Fatalf("terraform plan of examples/basic: %v", err)
	}
}

// nodeTuningCopy is the module copied to a temporary directory, so init writes no .terraform into the repository.
func nodeTuningCopy(t *testing.T) string {
	t.Helper()
	return filepath.Join(nodeTuningCopyTree(t), "node-tuning")
}

func nodeTuningCopyTree(t *testing.T) string {
	t.Helper()
	return filepath.Join(tftest.CopyModules(t, "node-tuning"), "modules")
}
