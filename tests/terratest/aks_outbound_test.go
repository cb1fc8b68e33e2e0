package terratest_test

import (
	"maps"
	"testing"
)

// The values modules/aks-outbound hands to azurerm_kubernetes_cluster.network_profile, from its locals.
const outboundHarness = `
output "outbound_type" { value = var.outbound_type }
output "load_balancer_profile" { value = local.load_balancer_profile }
output "nat_gateway_profile" { value = local.nat_gateway_profile }
output "nat_gateway_sku" { value = local.nat_gateway_sku }
output "public_ip_count" { value = local.public_ip_count }
output "outbound_ip_count" { value = local.outbound_ip_count }
output "nodes_at_max" { value = local.lb_ready ? module.sizing.nodes_at_max : null }
output "profile_outbound" { value = local.profile_outbound }
`

// Every vector Python wrote from wirespeed.azure.outbound.plan_outbound: the load balancer profile (ports never 0,
// managed IP count or IDs, idle timeout), the NAT gateway profile and the IPs to create equal Python's; every plan
// Python refuses (bad input or infeasible), Terraform refuses with the same message and nothing else.
func TestAksOutboundMatchesPython(t *testing.T) {
	module := newPureModule(t, "aks-outbound", outboundHarness)
	for _, c := range aksVectors(t, "aks_outbound.json") {
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
		})
	}
}

// One invalid input per case, each refused by its own rule with its exact message; the last case has several
// problems and shows that every one is reported at once.
func TestAksOutboundRefusesEachRule(t *testing.T) {
	module := newPureModule(t, "aks-outbound", outboundHarness)
	pools := []map[string]any{{"max_count": 10, "max_surge": "10%"}}
	lb := map[string]any{"pools": pools, "allocated_outbound_ports": 1024}
	nat := map[string]any{"pools": pools, "outbound_type": "managedNATGateway", "nat_gateway_flows": 1000}
	cases := []struct {
		name     string
		base     map[string]any
		inputs   map[string]any
		messages []string
	}{
		{"ports not a multiple of 8", lb, map[string]any{"allocated_outbound_ports": 1001}, []string{
			"allocated_outbound_ports: 1001 is not allowed: a multiple of 8 between 8 and 64,000 (0 would hand the choice to Azure, which halves it as the pool grows)"}},
		{"ports above 64000", lb, map[string]any{"allocated_outbound_ports": 64008}, []string{
			"allocated_outbound_ports: 64008 is not allowed: a multiple of 8 between 8 and 64,000 (0 would hand the choice to Azure, which halves it as the pool grows)"}},
		{"created without a resource group", lb, map[string]any{"ip_mode": "created", "location": "westeurope"}, []string{
			"resource_group_name: null is not allowed with ip_mode 'created': the resource group the public IPs go in"}},
		{"created without a location", lb, map[string]any{"ip_mode": "created", "resource_group_name": "rg"}, []string{
			"location: null is not allowed with ip_mode 'created': the cluster's region, where the public IPs go"}},
		{"ip_mode", lb, map[string]any{"ip_mode": "byo"}, []string{"ip_mode: 'byo' is not allowed: 'managed', 'created' or 'existing'"}},
		{"too many existing IPs", lb, map[string]any{"ip_mode": "existing", "existing_ip_ids": manyIDs(101)}, []string{
			"existing_ip_ids: 101 IDs is not allowed: at most 100"}},
		{"NAT with a workload", nat, map[string]any{"connections_per_second": 5}, []string{
			"connections_per_second: 5 is not allowed with managedNATGateway: load balancer setting (a NAT gateway allocates ports on demand)"}},
		{"NAT with a fixed load balancer IP count", nat, map[string]any{"outbound_ip_count": 2}, []string{
			"outbound_ip_count: 2 is not allowed with managedNATGateway: load balancer setting (a NAT gateway allocates ports on demand)"}},
		{"NAT flows and IP count", nat, map[string]any{"nat_gateway_ip_count": 2}, []string{
			"nat_gateway_ip_count: give exactly one of nat_gateway_ip_count (1..16) or nat_gateway_flows (concurrent outbound flows)"}},
		{"NAT flows zero", nat, map[string]any{"nat_gateway_flows": 0}, []string{
			"nat_gateway_flows: 0 is not allowed: must be a whole number between 1 and 1,000,000,000"}},
		{"load balancer with NAT flows", lb, map[string]any{"nat_gateway_flows": 10}, []string{
			"nat_gateway_flows: 10 is not allowed with loadBalancer: NAT gateway setting"}},
		{"load balancer with a NAT IP count", lb, map[string]any{"nat_gateway_ip_count": 2}, []string{
			"nat_gateway_ip_count: 2 is not allowed with loadBalancer: NAT gateway setting"}},
		{"NAT SKU in lower case", nat, map[string]any{"nat_gateway_sku": "standardv2"}, []string{
			"nat_gateway_sku: 'standardv2' is not allowed: 'Standard' or 'StandardV2'"}},
		{"idle timeout fraction", lb, map[string]any{"idle_timeout_minutes": 4.5}, []string{
			"idle_timeout_minutes: 4.5 is not allowed: must be a whole number between 4 and 120"}},
		{"several problems, all reported", lb, map[string]any{
			"pools":                    []map[string]any{{"max_count": 10, "max_surge": "0"}, {"max_count": 0}},
			"allocated_outbound_ports": 4,
			"idle_timeout_minutes":     121,
			"nat_gateway_flows":        10,
		}, []string{
			"pools[1].max_count: 0 is not allowed: must be a whole number between 1 and 1,000",
			"pools[0].max_surge: '0' is not allowed: a node count from 1 to max_count (10) or a percent above 0% up to 100% (e.g. '1' or '10%')",
			"allocated_outbound_ports: 4 is not allowed: a multiple of 8 between 8 and 64,000 (0 would hand the choice to Azure, which halves it as the pool grows)",
			"idle_timeout_minutes: 121 is not allowed: must be a whole number between 4 and 120",
			"nat_gateway_flows: 10 is not allowed with loadBalancer: NAT gateway setting",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inputs := maps.Clone(c.base)
			maps.Copy(inputs, c.inputs)
			_, err := module.apply(t, inputs)
			requireRefusal(t, err, c.messages)
		})
	}
}

func manyIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "/subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/ip"
	}
	return ids
}

// With the azurerm provider in the plugin mirror: terraform validate and terraform test (mock_provider) of the
// module. Its example is the AKS example in modules/aks-node-pool (TestAksNodePoolWithProvider and
// TestCheckAksExamplePassesEveryRuleButTheDisabledTuningAgent).
func TestAksOutboundWithProvider(t *testing.T) {
	providerChecks(t, "aks-outbound")
}
