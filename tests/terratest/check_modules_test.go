package terratest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// The same gates for module users: the real providers plan each resource module's example offline (azurerm with
// tftest.AzureIdentity's token; aws with mock credentials), `terraform show -json` writes the plan, and the
// repository's `wirespeed check` judges it, the command a Pulumi user runs on a preview export. What the modules
// refuse never reaches a plan, and the check refuses the same value put into the example's real plan; what they
// allow should pass the policy pack. The gaps found, where a module allows what the pack refuses (or the pack
// cannot judge a plan), are pinned below by name so that closing one is a deliberate change.

// withoutTuningAgent disables exactly tuning-agent-present: the examples deploy the tuning DaemonSet through
// modules/node-tuning (kubernetes_manifest), which cannot be planned here (the kubernetes provider is not
// obtainable), so an example plan holds pools and no DaemonSet. Every other rule runs at its default.
const withoutTuningAgent = `{"tuning-agent-present": "disabled"}`

type checkViolation struct {
	Rule    string `json:"rule"`
	URN     string `json:"urn"`
	Message string `json:"message"`
}

type checkReport struct {
	Input      string           `json:"input"`
	Resources  int              `json:"resources"`
	Rules      []string         `json:"rules"`
	Passed     bool             `json:"passed"`
	Violations []checkViolation `json:"violations"`
}

func (r checkReport) found() []string {
	var out []string
	for _, v := range r.Violations {
		out = append(out, v.Rule+" "+v.URN)
	}
	slices.Sort(out)
	return out
}

// wirespeedCheck runs `wirespeed check --format json` (the repository's own virtualenv) on a plan, with config as
// the --config file when not empty.
func wirespeedCheck(t *testing.T, plan, config string) checkReport {
	t.Helper()
	bin := filepath.Join(tftest.Root(), ".venv", "bin", "wirespeed")
	if _, err := os.Stat(bin); err != nil {
		tftest.Require(t, "needs the repository's virtualenv with wirespeed installed ("+bin+"): make venv")
	}
	args := []string{"check", plan, "--format", "json"}
	if config != "" {
		path := filepath.Join(t.TempDir(), "check-config.json")
		if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: a mandatory violation, still a report
		t.Fatalf("wirespeed check %s: %v\n%s", plan, err, stderr.String())
	}
	var report checkReport
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("wirespeed check --format json: %v in %s", err, out)
	}
	if report.Input != "terraform show -json PLANFILE" {
		t.Fatalf("wirespeed check read %s as %q", plan, report.Input)
	}
	if report.Passed != (err == nil) {
		t.Fatalf("wirespeed check: passed %v but exit %v", report.Passed, err)
	}
	return report
}

// example is one module's examples/basic, copied out of the repository and initialised once with the real
// provider; each case rewrites main.tf from the original and plans it.
type example struct {
	dir      string
	original string
	tf       *tfexec.Terraform
}

func newExample(t *testing.T, module string) *example {
	t.Helper()
	dir := filepath.Join(tftest.CopyModules(t, module), "modules", module, "examples", "basic")
	var env map[string]string
	if strings.HasPrefix(module, "aks-") {
		tftest.NeedProvider(t, "azurerm")
		env = tftest.AzureIdentity(t)
	} else {
		tftest.NeedProvider(t, "aws")
		// An _override.tf file merges into the example's provider block: mock credentials and no account
		// lookups, so the plan (no data sources in these modules) asks AWS for nothing.
		writeFile(t, filepath.Join(dir, "provider_override.tf"), awsProvider(""))
	}
	body, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	tf := tftest.NewWithEnv(t, dir, env)
	tftest.Init(t, tf)
	return &example{dir: dir, original: string(body), tf: tf}
}

// edit is a change to the example's main.tf: old must occur exactly once.
type edit struct{ old, new string }

// plan writes main.tf with the edits applied, runs `terraform plan -out`, and returns the path of the
// `terraform show -json` document, or Terraform's error (a module's validation refusing an input).
func (e *example) plan(t *testing.T, edits ...edit) (string, error) {
	t.Helper()
	text := e.original
	for _, change := range edits {
		if n := strings.Count(text, change.old); n != 1 {
			t.Fatalf("examples/basic/main.tf holds %q %d times, want once", change.old, n)
		}
		text = strings.Replace(text, change.old, change.new, 1)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "main.tf"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	planFile := filepath.Join(e.dir, "plan.tfplan")
	if _, err := e.tf.Plan(ctx, tfexec.Out(planFile), tfexec.Refresh(false), tfexec.Lock(false)); err != nil {
		return "", err
	}
	// ShowPlanFileRaw is the human rendering; ShowPlanFile runs `terraform show -json` into terraform-json's Plan,
	// whose encoding is the documented JSON format again.
	parsed, err := e.tf.ShowPlanFile(ctx, planFile)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.MarshalIndent(parsed, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, nil
}

// setAfter rewrites one planned value of a resource in a `terraform show -json` plan (path through the change's
// `after`: object keys, and 0 for a nested block's single item) and returns the new document's path. It shows
// what `wirespeed check` says of the value a module refused to plan, in the example's own real plan.
func setAfter(t *testing.T, plan, address string, value any, path ...any) string {
	t.Helper()
	body, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	changes, _ := doc["resource_changes"].([]any)
	for _, c := range changes {
		change, _ := c.(map[string]any)
		if change["address"] != address {
			continue
		}
		var node any = change["change"].(map[string]any)["after"]
		for i, step := range path {
			last := i == len(path)-1
			switch key := step.(type) {
			case string:
				object := node.(map[string]any)
				if last {
					object[key] = value
				}
				node = object[key]
			case int:
				node = node.([]any)[key]
			}
		}
		out := filepath.Join(t.TempDir(), "plan.json")
		body, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("%s plans no %s", plan, address)
	return ""
}

// requireFound fails unless the check found exactly want.
func requireFound(t *testing.T, what string, report checkReport, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	if got := report.found(); !slices.Equal(got, want) {
		t.Errorf("%s: wirespeed check found %q, want %q\n%+v", what, got, want, report.Violations)
	}
}

const (
	nodeGroup      = "module.edge_nodes.aws_eks_node_group.this"
	launchTemplate = "module.edge_nodes.aws_launch_template.this"
	ingestPool     = "module.ingest.azurerm_kubernetes_cluster_node_pool.this[0]"
	cluster        = "azurerm_kubernetes_cluster.this"
)

// examplesFor makes one example per module the cases name, in the test itself: an example's copy and token
// endpoint live as long as the test that made them, so not inside a case.
func examplesFor[C any](t *testing.T, cases []C, module func(C) string) map[string]*example {
	t.Helper()
	examples := map[string]*example{}
	for _, c := range cases {
		if examples[module(c)] == nil {
			examples[module(c)] = newExample(t, module(c))
		}
	}
	return examples
}

// planPassesAllButTuningAgent plans an AKS example and requires `wirespeed check` to find nothing with
// tuning-agent-present disabled, and exactly that rule on the cluster without the config. It returns the plan.
func planPassesAllButTuningAgent(t *testing.T, example *example) string {
	t.Helper()
	plan, err := example.plan(t)
	if err != nil {
		t.Fatalf("terraform plan of examples/basic: %v", err)
	}
	report := wirespeedCheck(t, plan, withoutTuningAgent)
	if slices.Contains(report.Rules, "tuning-agent-present") || len(report.Rules) < 2 {
		t.Errorf("rules run: %q, want every rule but tuning-agent-present", report.Rules)
	}
	requireFound(t, "examples/basic", report, nil)
	requireFound(t, "without --config", wirespeedCheck(t, plan, ""), []string{"tuning-agent-present " + cluster})
	return plan
}

// The AKS example (modules/aks-node-pool/examples/basic, the example of aks-node-pool and aks-outbound alike), with
// tuning-agent-present disabled (no kubernetes provider to plan modules/node-tuning; without the config that rule
// fails too), passes every other rule: the user pool the module makes and the system pool the cluster builds from its
// default_node_pool output (system_pool = true) are both tuned, and the SNAT ports and IPs aks-outbound sizes fit.
// A size aks-node-pool refuses, and ports 0 (Azure's shrinking default), which aks-outbound refuses, the check
// refuses too, in the same example's plan.
func TestCheckAksExamplePassesEveryRuleButTheDisabledTuningAgent(t *testing.T) {
	example := newExample(t, "aks-node-pool")
	plan := planPassesAllButTuningAgent(t, example)

	t.Run("a size the module refuses, the check refuses", func(t *testing.T) {
		_, err := example.plan(t, edit{`vm_size               = "Standard_D16s_v6"`, `vm_size               = "Standard_D16s_v5"`})
		requireRefusal(t, err, []string{
			"vm_size: 'Standard_D16s_v5' is not allowed: not network-optimised (NIC mellanox-or-mana, 12,500 Mb/s); use a MANA size such as Standard_D16s_v6, Standard_D16ads_v6, Standard_D16as_v6, or set not_network_optimised_reason to the reason this pool may use it"})
		refused := wirespeedCheck(t, setAfter(t, plan, ingestPool, "Standard_D16s_v5", "vm_size"), withoutTuningAgent)
		requireFound(t, "vm_size Standard_D16s_v5", refused, []string{"network-optimised-sku " + ingestPool})
	})

	// The system pool's backlog is judged like a user pool's: the kernel's default 1,000 in its place fails.
	t.Run("a system pool without its sysctls, the check refuses", func(t *testing.T) {
		untuned := wirespeedCheck(t, setAfter(t, plan, cluster, 1000, "default_node_pool", 0, "linux_os_config", 0, "sysctl_config", 0, "net_core_netdev_max_backlog"), withoutTuningAgent)
		requireFound(t, "system pool netdev_max_backlog 1000", untuned, []string{"netdev-backlog-minimum " + cluster})
	})

	// The capacity rule counts the module's pool although its kubernetes_cluster_id is unknown until apply: the
	// plan's configuration references link module.ingest to the cluster (and survive terraform-json's encoding).
	t.Run("ports the IPs cannot hold: the check counts the module's pool", func(t *testing.T) {
		overfull := wirespeedCheck(t, setAfter(t, plan, cluster, 16000, "network_profile", 0, "load_balancer_profile", 0, "outbound_ports_allocated"), withoutTuningAgent)
		requireFound(t, "outbound_ports_allocated 16000", overfull, []string{"aks-snat-capacity " + cluster})
		for _, v := range overfull.Violations {
			if v.Rule == "aks-snat-capacity" && !strings.Contains(v.Message, "ingest") {
				t.Errorf("aks-snat-capacity does not count the ingest pool: %s", v.Message)
			}
		}
	})

	t.Run("ports 0: aks-outbound refuses, the check refuses", func(t *testing.T) {
		_, err := example.plan(t, edit{"connections_per_second = 4", "allocated_outbound_ports = 0"})
		requireRefusal(t, err, []string{
			"allocated_outbound_ports: 0 is not allowed: a multiple of 8 between 8 and 64,000 (0 would hand the choice to Azure, which halves it as the pool grows)"})
		refused := wirespeedCheck(t, setAfter(t, plan, cluster, 0, "network_profile", 0, "load_balancer_profile", 0, "outbound_ports_allocated"), withoutTuningAgent)
		requireFound(t, "outbound_ports_allocated 0", refused, []string{"aks-allocated-outbound-ports-default " + cluster})
	})
}

// Gaps between the modules' validation and the policy pack: inputs a module plans without complaint and
// `wirespeed check` (default settings) refuses. Each case pins today's disagreement, so closing a gap (in the
// module or in the pack) makes its case fail and be removed deliberately.
func TestCheckGapsTheModulesAllowAndThePackRefuses(t *testing.T) {
	type gapCase struct {
		name, module string
		edits        []edit
		want         []string
	}
	cases := []gapCase{
		{
			// aks-outbound's workload sizing never goes below 1,024, but explicit ports only need to be a multiple
			// of 8 from 8; aks-snat-ports-minimum holds every cluster to 1,024 (minimumPorts). Planned in the AKS
			// example, which lives in modules/aks-node-pool.
			name: "aks-outbound explicit ports 512", module: "aks-node-pool",
			edits: []edit{{"connections_per_second = 4", "allocated_outbound_ports = 512"}},
			want:  []string{"aks-snat-ports-minimum " + cluster},
		},
		{
			// The balanced profile sets netdev_max_backlog 8,192 (sized for 25 Gb/s); an 82 Gb/s Standard_D192ds_v6
			// needs 32,768 (the line-rate minimum). The module only warns (check netdev_backlog_line_rate): the
			// pack's level and floors decide.
			name: "aks-node-pool balanced profile", module: "aks-node-pool",
			edits: []edit{
				{`profile               = "throughput"`, `profile               = "balanced"`},
				{`vm_size               = "Standard_D16s_v6"`, `vm_size               = "Standard_D192ds_v6"`},
			},
			want: []string{"netdev-backlog-minimum " + ingestPool},
		},
		{
			// The same on the system pool (modules/aks-node-pool with system_pool = true), which the cluster holds.
			name: "aks-node-pool balanced system pool", module: "aks-node-pool",
			edits: []edit{
				{`profile     = "throughput"`, `profile     = "balanced"`},
				{`vm_size     = "Standard_D4s_v6"`, `vm_size     = "Standard_D192ds_v6"`},
			},
			want: []string{"netdev-backlog-minimum " + cluster},
		},
		// balanced on EKS: TestCheckEksNodeGroupExamplePassesEveryRule (it needs only the aws provider).
	}
	examples := examplesFor(t, cases, func(c gapCase) string { return c.module })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := examples[c.module].plan(t, c.edits...)
			if err != nil {
				t.Fatalf("the module refused it, so this gap is closed (update this case): %v", err)
			}
			requireFound(t, c.name, wirespeedCheck(t, plan, withoutTuningAgent), c.want)
		})
	}
}

// A closed gap: not_network_optimised_reason lets a module accept a size that is not network-optimised, and the
// module records it as the tag wirespeed.io.not-network-optimised-reason, which network-optimised-sku accepts by
// default (acceptWrittenReason); a platform team that sets acceptWrittenReason false gets the refusal back. Without
// a reason the module itself refuses the size (the examples' own tests pin that message).
func TestCheckAWrittenReasonTheModulesRecordPassesTheSkuRule(t *testing.T) {
	const noWaivers = `{"tuning-agent-present": "disabled", "network-optimised-sku": {"acceptWrittenReason": false}}`
	type reasonCase struct {
		name, module string
		edits        []edit
		flagged      []string
	}
	cases := []reasonCase{
		{
			name: "aks-node-pool user pool", module: "aks-node-pool",
			edits: []edit{{`vm_size               = "Standard_D16s_v6"`, `vm_size               = "Standard_D16s_v5"
  not_network_optimised_reason = "batch pool, egress is light"`}},
			flagged: []string{"network-optimised-sku " + ingestPool},
		},
		{
			// The system pool: the reason travels in default_node_pool's tags (output default_node_pool).
			name: "aks-node-pool system pool", module: "aks-node-pool",
			edits: []edit{{`vm_size     = "Standard_D4s_v6"`, `vm_size     = "Standard_D4s_v5"
  not_network_optimised_reason = "system add-ons only"`}},
			flagged: []string{"network-optimised-sku " + cluster},
		},
		{
			name: "eks-node-group", module: "eks-node-group",
			edits: []edit{{`instance_types = ["c6in.8xlarge", "c6in.12xlarge"]`, `instance_types = ["m6i.8xlarge"]
  not_network_optimised_reason = "batch nodes, egress is light"
  ena_express                  = false`}, {"  ena_express    = true\n", ""}},
			flagged: []string{"network-optimised-sku " + nodeGroup},
		},
	}
	examples := examplesFor(t, cases, func(c reasonCase) string { return c.module })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := examples[c.module].plan(t, c.edits...)
			if err != nil {
				t.Fatalf("the module refused a size given with a reason: %v", err)
			}
			requireFound(t, c.name+", acceptWrittenReason true", wirespeedCheck(t, plan, withoutTuningAgent), nil)
			requireFound(t, c.name+", acceptWrittenReason false", wirespeedCheck(t, plan, noWaivers), c.flagged)
		})
	}
}

// The eks-node-group example passes every rule, tuning-agent-present included (it joins an existing cluster, so
// the plan holds no cluster for the rule to judge); an instance type the module refuses, the check refuses.
func TestCheckEksNodeGroupExamplePassesEveryRule(t *testing.T) {
	example := newExample(t, "eks-node-group")
	plan, err := example.plan(t)
	if err != nil {
		t.Fatalf("terraform plan of examples/basic: %v", err)
	}
	report := wirespeedCheck(t, plan, "")
	if !report.Passed || !slices.Contains(report.Rules, "network-optimised-sku") || !slices.Contains(report.Rules, "netdev-backlog-minimum") {
		t.Errorf("rules run: %q, passed %v", report.Rules, report.Passed)
	}
	requireFound(t, "examples/basic", report, nil)

	t.Run("a type the module refuses, the check refuses", func(t *testing.T) {
		_, err := example.plan(t, edit{`instance_types = ["c6in.8xlarge", "c6in.12xlarge"]`, `instance_types = ["m6i.8xlarge"]`}, edit{"  ena_express    = true\n", ""})
		requireRefusal(t, err, []string{
			"instance_types[0]: 'm6i.8xlarge' is not allowed; allowed: a network-optimised type (e.g. c6in.8xlarge, c8in.8xlarge, c8ine.8xlarge), or give not_network_optimised_reason"})
		refused := wirespeedCheck(t, setAfter(t, plan, nodeGroup, []any{"m6i.8xlarge"}, "instance_types"), "")
		requireFound(t, "instance_types m6i.8xlarge", refused, []string{"network-optimised-sku " + nodeGroup})
	})

	// The launch template names no instance type, so the module tags it with the fastest type's line rate
	// (wirespeed.io/line-rate-gbps, as NetworkOptimizedNodeGroup does) and netdev-backlog-minimum holds balanced's
	// 8,192 (sized for 25 Gb/s) to c6in.16xlarge's 100 Gb/s, whose 4 ms stall holds 32,510 packets. The module only warns (check
	// netdev_backlog_line_rate): the pack's level and floors decide.
	t.Run("balanced on a 100 Gb/s type: the module plans it, the check refuses it", func(t *testing.T) {
		plan, err := example.plan(t,
			edit{`instance_types = ["c6in.8xlarge", "c6in.12xlarge"]`, `instance_types = ["c6in.16xlarge"]`},
			edit{`profile        = "throughput"`, `profile        = "balanced"`})
		if err != nil {
			t.Fatalf("the module refused it: %v", err)
		}
		report := wirespeedCheck(t, plan, "")
		requireFound(t, "balanced on c6in.16xlarge", report, []string{"netdev-backlog-minimum " + launchTemplate})
		message := report.Violations[0].Message
		if !strings.Contains(message, "below the minimum 32,510 for the line rate 100 Gb/s its tag wirespeed.io/line-rate-gbps (its node group's fastest instanceType) declares") {
			t.Errorf("the refusal does not say why: %s", message)
		}
	})
}

// withNatIPsKnown is the plan as it would read once its Elastic IPs exist: each NAT gateway's allocation_id and
// secondary_allocation_ids set to one id per aws_eip planned for its AZ (module.egress.aws_eip.this["<az>/<i>"]),
// and no longer marked unknown.
func withNatIPsKnown(t *testing.T, plan string) string {
	t.Helper()
	body, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	changes, _ := doc["resource_changes"].([]any)
	ips := map[string]int{}
	for _, c := range changes {
		change := c.(map[string]any)
		if index, ok := change["index"].(string); ok && change["type"] == "aws_eip" {
			ips[strings.Split(index, "/")[0]]++
		}
	}
	gateways := 0
	for _, c := range changes {
		change := c.(map[string]any)
		az, _ := change["index"].(string)
		if change["type"] != "aws_nat_gateway" || ips[az] == 0 {
			continue
		}
		gateways++
		planned := change["change"].(map[string]any)
		after, unknown := planned["after"].(map[string]any), planned["after_unknown"].(map[string]any)
		after["allocation_id"] = "eipalloc-" + az + "-0"
		var secondary []any
		for i := 1; i < ips[az]; i++ {
			secondary = append(secondary, fmt.Sprintf("eipalloc-%s-%d", az, i))
		}
		after["secondary_allocation_ids"] = secondary
		delete(unknown, "allocation_id")
		delete(unknown, "secondary_allocation_ids")
	}
	if gateways == 0 {
		t.Fatalf("%s plans no NAT gateway with Elastic IPs", plan)
	}
	out := filepath.Join(t.TempDir(), "plan.json")
	body, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// natConfig declares a peak of connections to one destination to aws-natgw-capacity (off without one) and the
// account's per-gateway Elastic IP quota raised to the example's 3 (aws-natgw-eip-quota advises otherwise), with
// tuning-agent-present disabled (this example has no cluster; disabled to say no rule but the NAT ones is meant).
func natConfig(peak int) string {
	return fmt.Sprintf(`{"tuning-agent-present": "disabled", "aws-natgw-capacity": {"peakConnectionsPerDestination": %d}, "aws-natgw-eip-quota": {"accountQuota": 3}}`, peak)
}

// The aws-nat-egress-zonal example (sized for 120,000 connections per AZ: 3 IPs x 55,000 each) passes every rule
// once its Elastic IPs exist, and fails aws-natgw-capacity at a peak beyond them; at AWS's default quota of 2 Elastic
// IPs per gateway, aws-natgw-eip-quota advises raising it for each gateway. In the plan itself, where the module
// creates the IPs, secondary_allocation_ids are written from other resources and known only after apply: both rules
// say they could not be checked, at their own level, whatever the peak (a gate never passes what it cannot read).
func TestCheckAwsNatEgressExamplePassesEveryRuleOnceItsIPsExist(t *testing.T) {
	example := newExample(t, "aws-nat-egress-zonal")
	plan, err := example.plan(t)
	if err != nil {
		t.Fatalf("terraform plan of examples/basic: %v", err)
	}
	var gateways []string
	for _, az := range []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"} {
		gateways = append(gateways, fmt.Sprintf("aws-natgw-capacity module.egress.aws_nat_gateway.this[%q]", az))
	}
	known := withNatIPsKnown(t, plan)
	requireFound(t, "IPs known, peak 120,000", wirespeedCheck(t, known, natConfig(120_000)), nil)
	var quota []string
	for _, gateway := range gateways {
		quota = append(quota, strings.Replace(gateway, "aws-natgw-capacity", "aws-natgw-eip-quota", 1))
	}
	defaultQuota := `{"tuning-agent-present": "disabled", "aws-natgw-capacity": {"peakConnectionsPerDestination": 120000}}`
	requireFound(t, "IPs known, AWS's default quota", wirespeedCheck(t, known, defaultQuota), quota)
	requireFound(t, "IPs known, peak 170,000", wirespeedCheck(t, known, natConfig(170_000)), gateways)
	unchecked := append(append([]string{}, gateways...), quota...)
	requireFound(t, "the plan, peak 120,000", wirespeedCheck(t, plan, natConfig(120_000)), unchecked)
	requireFound(t, "the plan, peak 170,000", wirespeedCheck(t, plan, natConfig(170_000)), unchecked)

	t.Run("a peak the module cannot size, it refuses and so does the check", func(t *testing.T) {
		_, err := example.plan(t, edit{"peak_connections = 120000", "peak_connections = 1000000"})
		requireRefusal(t, err, []string{
			"peak_connections: 1000000 is not allowed; allowed: 1,000,000 required but 8 IPs give at most 440,000 to one destination; use a regional NAT gateway (up to 32 IPs per AZ) or spread calls over more destination IPs"})
		requireFound(t, "IPs known, peak 1,000,000", wirespeedCheck(t, known, natConfig(1_000_000)), gateways)
	})
}
