package terratest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// stateValues lists every resource and data source of the current state by address.
func stateValues(t testing.TB, tf *tfexec.Terraform) map[string]map[string]any {
	t.Helper()
	state, err := tf.Show(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(state.Values.RootModule)
	var root map[string]any
	_ = json.Unmarshal(raw, &root)
	resources := map[string]map[string]any{}
	stateResources(root, resources)
	return resources
}

func outputValues(t testing.TB, tf *tfexec.Terraform, into map[string]any) {
	t.Helper()
	outputs, err := tf.Output(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, ptr := range into {
		if err := json.Unmarshal(outputs[name].Value, ptr); err != nil {
			t.Fatalf("output %s: %v", name, err)
		}
	}
}

// The zonal NAT egress module applied with the real provider against moto's EC2 and CloudWatch over HTTP, from a root
// that also creates the VPC, public subnets and private route tables, for Python's per-AZ vector (1, 3 and 6
// Elastic IPs). Read back from moto through the provider's data sources: each gateway is available in its AZ's
// subnet with the AZ's first Elastic IP as primary, and each private route table sends 0.0.0.0/0 to its own
// AZ's gateway. moto ignores SecondaryAllocationIds (it keeps only the primary address), so the secondary IPs are
// checked in Terraform's state, as the provider sent them; the mock-provider test covers their wiring too.
func TestAwsNatEgressAppliesAgainstMotoSecondaryIPsOnlyInTerraformState(t *testing.T) {
	tftest.NeedProvider(t, "aws")
	var vector natVector
	for _, v := range natVectors(t) {
		if v.Name == "per_az_demand" {
			vector = v
		}
	}
	if vector.Expected == nil {
		t.Fatal("the per_az_demand vector is missing")
	}
	var demand map[string]int
	if err := json.Unmarshal(vector.Inputs["peak_connections_by_az"], &demand); err != nil {
		t.Fatal(err)
	}
	azs := make([]string, 0, len(demand))
	for az := range demand {
		azs = append(azs, az)
	}
	sort.Strings(azs)
	cidrs := make([]string, 0, len(azs))
	for i, az := range azs {
		cidrs = append(cidrs, fmt.Sprintf("%q = \"10.0.%d.0/24\"", az, i))
	}
	demandJSON, _ := json.Marshal(demand)

	url := startMoto(t)
	root := tftest.CopyModules(t, "aws-nat-egress-zonal")
	dir := filepath.Join(root, "moto")
	writeFile(t, filepath.Join(dir, "provider.tf"), awsProvider(url))
	writeFile(t, filepath.Join(dir, "main.tf"), `
resource "aws_vpc" "this" {
  cidr_block = "10.0.0.0/16"
}

resource "aws_subnet" "public" {
  for_each          = { `+strings.Join(cidrs, ", ")+` }
  vpc_id            = aws_vpc.this.id
  cidr_block        = each.value
  availability_zone = each.key
}

resource "aws_route_table" "private" {
  for_each = aws_subnet.public
  vpc_id   = aws_vpc.this.id
}

module "egress" {
  source                  = "../modules/aws-nat-egress-zonal"
  name                    = "moto"
  public_subnet_ids       = { for az, subnet in aws_subnet.public : az => subnet.id }
  peak_connections_by_az  = jsondecode(`+strconvQuote(string(demandJSON))+`)
  private_route_table_ids = { for az, table in aws_route_table.private : az => table.id }
}

# What moto holds, read back through the provider once the module is applied.
data "aws_nat_gateway" "moto" {
  for_each = module.egress.nat_gateway_ids
  id       = each.value
}

data "aws_route_table" "moto" {
  for_each       = aws_route_table.private
  route_table_id = each.value.id
  depends_on     = [module.egress]
}

output "subnets" { value = { for az, subnet in aws_subnet.public : az => subnet.id } }
output "ips_by_az" { value = module.egress.ips_by_az }
output "allocation_ids" { value = module.egress.allocation_ids }
output "public_ips" { value = module.egress.public_ips }
output "nat_gateway_ids" { value = module.egress.nat_gateway_ids }
output "moto_gateways" {
  value = { for az, gateway in data.aws_nat_gateway.moto : az => {
    allocation_id = gateway.allocation_id, subnet_id = gateway.subnet_id, state = gateway.state
  } }
}
output "moto_default_routes" {
  value = { for az, table in data.aws_route_table.moto : az => [for route in table.routes : route.nat_gateway_id if route.cidr_block == "0.0.0.0/0"] }
}
`)
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	var out bytes.Buffer
	timed(t, "apply against moto", func() {
		if err := tf.ApplyJSON(context.Background(), &out); err != nil {
			t.Fatalf("apply: %v\n%s", err, out.String())
		}
	})

	// The quota warning reached the user, as Python words it, and did not stop the apply.
	var warnings []string
	for _, w := range warningDetails(t, out.Bytes()) {
		if _, detail, ok := strings.Cut(w, "Check block assertion failed: "); ok {
			warnings = append(warnings, strings.Split(detail, "\n")...)
		}
	}
	sort.Strings(warnings)
	want := append([]string(nil), vector.Expected.Warnings...)
	sort.Strings(want)
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("quota warnings:\n got  %q\n want %q", warnings, want)
	}

	var (
		subnets, gatewayIDs map[string]string
		ips                 map[string]int
		allocations, public map[string][]string
		moto                map[string]struct {
			AllocationID string `json:"allocation_id"`
			SubnetID     string `json:"subnet_id"`
			State        string `json:"state"`
		}
		routes map[string][]string
	)
	outputValues(t, tf, map[string]any{
		"subnets": &subnets, "nat_gateway_ids": &gatewayIDs, "ips_by_az": &ips, "allocation_ids": &allocations,
		"public_ips": &public, "moto_gateways": &moto, "moto_default_routes": &routes,
	})
	state := stateValues(t, tf)
	for _, az := range azs {
		t.Run(az, func(t *testing.T) {
			want := vector.Expected.IPs[az]
			if ips[az] != want || len(allocations[az]) != want || len(public[az]) != want {
				t.Fatalf("Elastic IPs: %d planned, %d allocated, %d public IPs; Python sizes %d", ips[az], len(allocations[az]), len(public[az]), want)
			}
			got := moto[az]
			if got.State != "available" || got.SubnetID != subnets[az] || got.AllocationID != allocations[az][0] {
				t.Errorf("moto's gateway %+v: want available in %s with primary %s", got, subnets[az], allocations[az][0])
			}
			if len(routes[az]) != 1 || routes[az][0] != gatewayIDs[az] {
				t.Errorf("moto's route table %s: 0.0.0.0/0 -> %v, want %s", az, routes[az], gatewayIDs[az])
			}
			gateway := state[fmt.Sprintf("module.egress.aws_nat_gateway.this[%q]", az)]
			var secondary []string
			if list, ok := gateway["secondary_allocation_ids"].([]any); ok {
				for _, id := range list {
					secondary = append(secondary, id.(string))
				}
			}
			sort.Strings(secondary)
			rest := append([]string(nil), allocations[az][1:]...)
			sort.Strings(rest)
			if strings.Join(secondary, ",") != strings.Join(rest, ",") {
				t.Errorf("secondary_allocation_ids in Terraform's state %v, want %v", secondary, rest)
			}
			alarm := state[fmt.Sprintf("module.egress.aws_cloudwatch_metric_alarm.port_allocation[%q]", az)]
			if alarm == nil || alarm["metric_name"] != "ErrorPortAllocation" || alarm["dimensions"].(map[string]any)["NatGatewayId"] != gatewayIDs[az] {
				t.Errorf("ErrorPortAllocation alarm for %s: %v", gatewayIDs[az], alarm)
			}
		})
	}
}

// The node group module applied with the real provider against moto's EC2, EKS and IAM over HTTP (a root that
// also creates the VPC, subnet, security group, roles and the cluster), with ENA Express. After the apply the
// state is refreshed from moto: the launch template's user data moto stores decodes to exactly Python's bytes,
// IMDSv2 is required with hop limit 2, ENA Express (SRD) is on the primary interface with the security groups,
// and the node group moto holds (read by a data source) runs that template
// with the profile label and AL2023 AMI type.
func TestEksNodeGroupAppliesAgainstMoto(t *testing.T) {
	tftest.NeedProvider(t, "aws")
	var vector eksVector
	for _, v := range eksVectors(t) {
		if v.Name == "throughput_al2023_ena_express" {
			vector = v
		}
	}
	if vector.Expected == nil {
		t.Fatal("the throughput_al2023_ena_express vector is missing")
	}
	var instanceTypes []string
	_ = json.Unmarshal(vector.Inputs["instance_types"], &instanceTypes)
	typesJSON, _ := json.Marshal(instanceTypes)

	url := startMoto(t)
	root := tftest.CopyModules(t, "eks-node-group")
	dir := filepath.Join(root, "moto")
	writeFile(t, filepath.Join(dir, "provider.tf"), awsProvider(url))
	writeFile(t, filepath.Join(dir, "main.tf"), `
resource "aws_vpc" "this" {
  cidr_block = "10.1.0.0/16"
}

resource "aws_subnet" "private" {
  vpc_id            = aws_vpc.this.id
  cidr_block        = "10.1.0.0/24"
  availability_zone = "eu-west-1a"
}

resource "aws_security_group" "nodes" {
  vpc_id = aws_vpc.this.id
}

resource "aws_iam_role" "cluster" {
  name               = "eks-cluster"
  assume_role_policy = jsonencode({ Version = "2012-10-17", Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = "eks.amazonaws.com" } }] })
}

resource "aws_iam_role" "node" {
  name               = "eks-node"
  assume_role_policy = jsonencode({ Version = "2012-10-17", Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = "ec2.amazonaws.com" } }] })
}

resource "aws_eks_cluster" "this" {
  name     = "moto"
  role_arn = aws_iam_role.cluster.arn
  vpc_config {
    subnet_ids = [aws_subnet.private.id]
  }
}

module "nodes" {
  source             = "../modules/eks-node-group"
  name               = "edge"
  cluster_name       = aws_eks_cluster.this.name
  node_role_arn      = aws_iam_role.node.arn
  subnet_ids         = [aws_subnet.private.id]
  security_group_ids = [aws_security_group.nodes.id]
  instance_types     = jsondecode(`+strconvQuote(string(typesJSON))+`)
  ena_express        = true
}

# What moto holds, read back through the provider once the module is applied.
data "aws_eks_node_group" "moto" {
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = module.nodes.node_group_name
}

output "moto_node_group" {
  value = {
    ami_type        = data.aws_eks_node_group.moto.ami_type
    instance_types  = data.aws_eks_node_group.moto.instance_types
    labels          = data.aws_eks_node_group.moto.labels
    launch_template = data.aws_eks_node_group.moto.launch_template
  }
}
output "launch_template_id" { value = module.nodes.launch_template_id }
`)
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	timed(t, "apply against moto", func() {
		if err := tf.Apply(context.Background()); err != nil {
			t.Fatalf("apply: %v", err)
		}
	})
	timed(t, "refresh from moto", func() {
		if err := tf.Apply(context.Background(), tfexec.RefreshOnly(true)); err != nil {
			t.Fatalf("apply -refresh-only: %v", err)
		}
	})
	var templateID string
	var group struct {
		AmiType        string            `json:"ami_type"`
		InstanceTypes  []string          `json:"instance_types"`
		Labels         map[string]string `json:"labels"`
		LaunchTemplate []struct {
			ID string `json:"id"`
		} `json:"launch_template"`
	}
	outputValues(t, tf, map[string]any{"launch_template_id": &templateID, "moto_node_group": &group})

	template := stateValues(t, tf)["module.nodes.aws_launch_template.this"]
	decoded, err := base64.StdEncoding.DecodeString(template["user_data"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var userData string
	_ = json.Unmarshal(vector.Expected["user_data"], &userData)
	if string(decoded) != userData {
		t.Errorf("the user data moto stores (%d bytes) differs from Python's render (%d bytes)", len(decoded), len(userData))
	}
	metadata := template["metadata_options"].([]any)[0].(map[string]any)
	if metadata["http_tokens"] != "required" || metadata["http_put_response_hop_limit"] != float64(2) {
		t.Errorf("metadata options in moto: %v", metadata)
	}
	var amiType, profile string
	_ = json.Unmarshal(vector.Expected["ami_type"], &amiType)
	_ = json.Unmarshal(vector.Expected["profile"], &profile)
	if group.AmiType != amiType || group.Labels["wirespeed.io/profile"] != profile {
		t.Errorf("moto's node group: ami_type %q labels %v; want %s and profile %s", group.AmiType, group.Labels, amiType, profile)
	}
	if strings.Join(group.InstanceTypes, ",") != strings.Join(instanceTypes, ",") {
		t.Errorf("moto's node group types %v, want %v", group.InstanceTypes, instanceTypes)
	}
	if len(group.LaunchTemplate) != 1 || group.LaunchTemplate[0].ID != templateID {
		t.Errorf("moto's node group launch template %+v, want %s", group.LaunchTemplate, templateID)
	}
	interfaces, _ := template["network_interfaces"].([]any)
	if len(interfaces) != 1 {
		t.Fatalf("network interfaces in moto: %v", interfaces)
	}
	primary := interfaces[0].(map[string]any)
	srd, _ := primary["ena_srd_specification"].([]any)
	groups, _ := primary["security_groups"].([]any)
	if len(srd) != 1 || srd[0].(map[string]any)["ena_srd_enabled"] != true || len(groups) != 1 {
		t.Errorf("ENA Express interface in moto: SRD %v, security groups %v", srd, groups)
	}
	if vpcGroups, _ := template["vpc_security_group_ids"].([]any); len(vpcGroups) != 0 {
		t.Errorf("security groups on the template as well as on the interface: %v", vpcGroups)
	}
}
