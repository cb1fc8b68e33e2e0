package terratest_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// The locals modules/aks-node-pool builds its azurerm_kubernetes_cluster_node_pool from, as outputs.
const nodePoolHarness = `
output "vm_size" { value = local.size.name }
output "network_optimised" { value = local.size.network_optimised }
output "surge_nodes" { value = local.surge_nodes }
output "profile" { value = var.profile }
output "labels" { value = local.labels }
output "left_to_agent" { value = local.profile.left_to_agent }
output "linux_os_config_sysctls" { value = local.linux_os_config_sysctls }
output "sysctl_config" { value = local.sysctl_config }
output "autoscaling" { value = local.autoscaling }
output "default_node_pool" { value = local.pool }
output "tags" { value = local.tags }
`

// Every vector Python wrote from wirespeed.azure.pools.check_pool: each built-in profile's sysctls, the labels and
// the surge equal Python's; every input Python refuses, Terraform refuses with the same message and nothing else.
func TestAksNodePoolMatchesPython(t *testing.T) {
	module := newPureModule(t, "aks-node-pool", nodePoolHarness)
	profiles := map[string]bool{}
	for _, c := range aksVectors(t, "aks_node_pool.json") {
		t.Run(c.Name, func(t *testing.T) {
			outputs, err := module.apply(t, c.Inputs)
			if c.Expected == nil {
				requireRefusal(t, err, c.TerraformMessages)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			for _, key := range sortedKeys(c.Expected) {
				requireSameJSON(t, key, outputs[key], c.Expected[key])
			}
			var profile string
			_ = json.Unmarshal(c.Expected["profile"], &profile)
			profiles[profile] = true
		})
	}
	// Every built-in profile of profiles.tf.json is among the vectors compared.
	for name := range builtinProfiles(t) {
		if !profiles[name] {
			t.Errorf("no vector applies built-in profile %q", name)
		}
	}
}

func builtinProfiles(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var doc struct {
		Locals struct {
			Profiles map[string]json.RawMessage `json:"wirespeed_profiles"`
		} `json:"locals"`
	}
	body, err := os.ReadFile(filepath.Join(tftest.Root(), "modules", "aks-node-pool", "profiles.tf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Locals.Profiles
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// One invalid input per case, each refused by its own validation rule with its exact message; the last case has
// several problems and shows that every one is reported at once.
func TestAksNodePoolRefusesEachRule(t *testing.T) {
	module := newPureModule(t, "aks-node-pool", nodePoolHarness)
	base := map[string]any{"name": "ingest", "kubernetes_cluster_id": "/subscriptions/0/aks", "vm_size": "Standard_D16s_v6"}
	// A message quotes the balanced profile's backlog, as generated into profiles.tf.json from the Python library.
	var balanced struct {
		AksSysctls map[string]int64 `json:"aks_sysctls"`
	}
	if err := json.Unmarshal(builtinProfiles(t)["balanced"], &balanced); err != nil {
		t.Fatal(err)
	}
	balancedBacklog := balanced.AksSysctls["net.core.netdev_max_backlog"]
	cases := []struct {
		name     string
		inputs   map[string]any
		messages []string
	}{
		{"name", map[string]any{"name": "Ingest-1"}, []string{
			"name: 'Ingest-1' is not allowed: 1-12 lowercase letters and digits, starting with a letter (AKS pool name)"}},
		{"unknown size", map[string]any{"vm_size": "Standard_Q16s_v9"}, []string{
			"vm_size: 'Standard_Q16s_v9' is not allowed: not in wirespeed's catalog, so accelerated networking cannot be confirmed (unknown instance type 'Standard_Q16s_v9': `wirespeed catalog list` shows every known type)"}},
		{"not network-optimised without a reason", map[string]any{"vm_size": "d8s-v5"}, []string{
			"vm_size: 'Standard_D8s_v5' is not allowed: not network-optimised (NIC mellanox-or-mana, 12,500 Mb/s); use a MANA size such as Standard_D8s_v6, Standard_D8ads_v6, Standard_D8as_v6, or set not_network_optimised_reason to the reason this pool may use it"}},
		{"blank reason", map[string]any{"vm_size": "Standard_D8s_v5", "not_network_optimised_reason": " "}, []string{
			"not_network_optimised_reason: ' ' is not allowed: a written reason (non-empty text) or null"}},
		{"cluster id missing", map[string]any{"kubernetes_cluster_id": nil}, []string{
			"kubernetes_cluster_id: null is not allowed: the ID of the azurerm_kubernetes_cluster the pool joins (required unless system_pool is true)"}},
		{"min_count below 0", map[string]any{"min_count": -1}, []string{
			"min_count: -1 is not allowed: must be a whole number between 0 and 1,000"}},
		{"system pool min_count 0", map[string]any{"system_pool": true, "kubernetes_cluster_id": nil, "min_count": 0}, []string{
			"min_count: 0 is not allowed: must be a whole number between 1 and 1,000"}},
		{"system pool taints", map[string]any{"system_pool": true, "kubernetes_cluster_id": nil, "taints": []string{"dedicated=ingest:NoSchedule"}}, []string{
			`taints: ["dedicated=ingest:NoSchedule"] is not allowed with system_pool = true: azurerm's default_node_pool cannot set node taints (only_critical_addons_enabled on the cluster's block gives the CriticalAddonsOnly taint); leave taints empty`}},
		{"min_count above max_count", map[string]any{"min_count": 4, "max_count": 3}, []string{
			"min_count: 4 is not allowed: must be at most max_count (3) (autoscaler range min..max)"}},
		{"max_count above 1000", map[string]any{"max_count": 1001}, []string{
			"max_count: 1001 is not allowed: must be a whole number between 1 and 1,000"}},
		{"max_count fraction", map[string]any{"max_count": 2.5}, []string{
			"max_count: 2.5 is not allowed: must be a whole number between 1 and 1,000"}},
		{"surge zero", map[string]any{"max_surge": "0%"}, []string{
			"max_surge: '0%' is not allowed: a node count from 1 to max_count (3) or a percent above 0% up to 100% (e.g. '1' or '10%')"}},
		{"surge above max_count", map[string]any{"max_surge": "4"}, []string{
			"max_surge: '4' is not allowed: a node count from 1 to max_count (3) or a percent above 0% up to 100% (e.g. '1' or '10%')"}},
		{"surge not a number", map[string]any{"max_surge": "ten"}, []string{
			"max_surge: 'ten' is not allowed: a node count from 1 to max_count (3) or a percent above 0% up to 100% (e.g. '1' or '10%')"}},
		{"zone", map[string]any{"zones": []string{"1", "4"}}, []string{"zones[1]: '4' is not allowed: one of 1, 2, 3"}},
		{"zone twice", map[string]any{"zones": []string{"2", "2"}}, []string{"zones: ['2', '2'] is not allowed: each zone at most once"}},
		{"os_sku", map[string]any{"os_sku": "Windows2022"}, []string{
			"os_sku: 'Windows2022' is not allowed: one of Ubuntu, Ubuntu2204, AzureLinux, AzureLinux3 (Linux: the tuning agent and linuxOSConfig are Linux-only)"}},
		{"max_pods", map[string]any{"max_pods": 9}, []string{"max_pods: 9 is not allowed: must be a whole number between 10 and 250"}},
		{"profile", map[string]any{"profile": "latency"}, []string{
			"profile: 'latency' is not allowed: 'latency' is not a built-in profile: balanced, throughput"}},
		{"profile label", map[string]any{"profile": "balanced", "labels": map[string]string{"wirespeed.io/profile": "throughput"}}, []string{
			"labels['wirespeed.io/profile']: 'throughput' is not allowed: it must equal the pool's profile 'balanced' (the DaemonSet selects nodes by it); leave it out and it is set for you"}},
		{"taint", map[string]any{"taints": []string{"dedicated=ingest:NoSchedule", "gpu:Sometimes"}}, []string{
			"taints[1]: 'gpu:Sometimes' is not allowed: KEY[=VALUE]:EFFECT with EFFECT one of NoSchedule, PreferNoSchedule, NoExecute"}},
		{"sysctl the profile sets", map[string]any{"profile": "balanced", "extra_sysctls": map[string]string{"net.core.netdev_max_backlog": "16384"}}, []string{
			fmt.Sprintf("extra_sysctls['net.core.netdev_max_backlog']: 16384 is not allowed: profile 'balanced' already sets net.core.netdev_max_backlog to %d", balancedBacklog)}},
		{"sysctl AKS cannot set", map[string]any{"extra_sysctls": map[string]string{"net.core.netdev_budget": "600"}}, []string{
			"extra_sysctls['net.core.netdev_budget']: 'net.core.netdev_budget' is not a sysctl AKS sets at node creation; supported: net.core.netdev_max_backlog, net.core.somaxconn, net.core.rmem_max, net.core.wmem_max, net.core.optmem_max, net.ipv4.tcp_max_syn_backlog, net.ipv4.tcp_fin_timeout, net.ipv4.ip_local_port_range"}},
		{"sysctl out of range", map[string]any{"extra_sysctls": map[string]string{"net.ipv4.tcp_fin_timeout": "121"}}, []string{
			"extra_sysctls['net.ipv4.tcp_fin_timeout']: 121 is not allowed: must be a whole number between 5 and 120 (AKS's range for netIpv4TcpFinTimeout)"}},
		{"sysctl not a number", map[string]any{"extra_sysctls": map[string]string{"net.core.rmem_max": "lots"}}, []string{
			"extra_sysctls['net.core.rmem_max']: 'lots' is not allowed: must be a whole number between 212,992 and 134,217,728 (AKS's range for netCoreRmemMax)"}},
		{"port range", map[string]any{"extra_sysctls": map[string]string{"net.ipv4.ip_local_port_range": "1024"}}, []string{
			"extra_sysctls['net.ipv4.ip_local_port_range']: '1024' is not allowed: \"FIRST LAST\" with FIRST 1,024..60,999, LAST 32,768..65,535 and FIRST < LAST (AKS's range for netIpv4IpLocalPortRange)"}},
		{"several problems, all reported", map[string]any{
			"vm_size": "Standard_D16s_v5", "max_count": 0, "zones": []string{"0"},
			"extra_sysctls": map[string]string{"net.core.somaxconn": "128"},
		}, []string{
			"vm_size: 'Standard_D16s_v5' is not allowed: not network-optimised (NIC mellanox-or-mana, 12,500 Mb/s); use a MANA size such as Standard_D16s_v6, Standard_D16ads_v6, Standard_D16as_v6, or set not_network_optimised_reason to the reason this pool may use it",
			"max_count: 0 is not allowed: must be a whole number between 1 and 1,000",
			"zones[0]: '0' is not allowed: one of 1, 2, 3",
			"extra_sysctls['net.core.somaxconn']: 128 is not allowed: must be a whole number between 4,096 and 3,240,000 (AKS's range for netCoreSomaxconn)",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inputs := maps.Clone(base)
			maps.Copy(inputs, c.inputs)
			_, err := module.apply(t, inputs)
			requireRefusal(t, err, c.messages)
		})
	}
}

// main.tf (the user pool) and the AKS example's default_node_pool (the system pool, from output default_node_pool)
// set every sysctl_config attribute profiles.tf.json can produce: a sysctl added to wirespeed.sizing.aks_sysctls
// without its attribute in either would be silently dropped from that pool.
func TestAksNodePoolMainSetsEverySysctlAttribute(t *testing.T) {
	var doc struct {
		Locals struct {
			Sysctls map[string]struct {
				Attribute  string   `json:"attribute"`
				Attributes []string `json:"attributes"`
			} `json:"aks_sysctls"`
		} `json:"locals"`
	}
	module := filepath.Join(tftest.Root(), "modules", "aks-node-pool")
	body, err := os.ReadFile(filepath.Join(module, "profiles.tf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	for file, values := range map[string]string{"main.tf": "local.sysctl_config", "examples/basic/main.tf": "local.system.sysctl_config"} {
		main, err := os.ReadFile(filepath.Join(module, file))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(main)), " ")
		for kernel, row := range doc.Locals.Sysctls {
			for _, attribute := range append([]string{row.Attribute}, row.Attributes...) {
				if attribute == "" {
					continue
				}
				line := attribute + ` = lookup(` + values + `, "` + attribute + `", null)`
				if !strings.Contains(text, line) {
					t.Errorf("%s does not set %s (%s): want %q", file, attribute, kernel, line)
				}
			}
		}
	}
}

// With the azurerm provider in the plugin mirror: terraform validate and terraform test (mock_provider) of the
// module and of examples/basic, the AKS example of this module and aks-outbound.
func TestAksNodePoolWithProvider(t *testing.T) {
	providerChecks(t, "aks-node-pool", "examples/basic")
}
