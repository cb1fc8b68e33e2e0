package terratest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/tests/terratest/tftest"
)

// awsModules are the modules this file covers with the provider on this image (hashicorp/aws 5.100.0).
var awsModules = []string{"eks-node-group", "aws-nat-egress-zonal"}

// regionalAwsModules need the provider's regional NAT gateway arguments (availability_mode, vpc_id,
// availability_zone_address: v6.24.0); they are validated and tested where a mirror holds such a provider.
var regionalAwsModules = []string{"aws-nat-egress-regional", "aws-nat-egress"}

// regionalProvider is the first hashicorp/aws release with regional NAT gateways (CHANGELOG 6.24.0, #45240).
const regionalProvider = "6.24.0"

// awsProvider is a provider block that never looks for real credentials; with endpoint set, every service the
// modules use is sent there (moto).
func awsProvider(endpoint string) string {
	endpoints := ""
	if endpoint != "" {
		endpoints = "\n  endpoints {\n"
		for _, service := range []string{"ec2", "eks", "iam", "sts", "cloudwatch"} {
			endpoints += fmt.Sprintf("    %s = %q\n", service, endpoint)
		}
		endpoints += "  }\n"
	}
	return `provider "aws" {
  region                      = "eu-west-1"
  access_key                  = "testing"
  secret_key                  = "testing"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
` + endpoints + "}\n"
}

// startMoto runs moto's server (the repository's .venv) on a free port and returns its URL; it is stopped when
// the test ends.
func startMoto(t testing.TB) string {
	t.Helper()
	python := filepath.Join(tftest.Root(), ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		tftest.Require(t, "needs the repository's .venv with moto: make venv")
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	logFile, err := os.Create(filepath.Join(t.TempDir(), "moto.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-m", "moto.server", "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if response, err := http.Get(url + "/moto-api/"); err == nil {
			response.Body.Close()
			return url
		}
	}
	log, _ := os.ReadFile(logFile.Name())
	t.Fatalf("moto did not answer on %s within 60 s:\n%s", url, log)
	return ""
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// timed logs how long a step took (the provider binary is ~700 MB: its start dominates).
func timed(t testing.TB, what string, step func()) {
	t.Helper()
	start := time.Now()
	step()
	t.Logf("%s: %.1f s", what, time.Since(start).Seconds())
}

// `terraform validate` of each AWS module and its example with the real hashicorp/aws provider from the mirror.
func TestAwsModulesValidateWithTheRealProvider(t *testing.T) {
	tftest.NeedProvider(t, "aws")
	validateModules(t, awsModules)
}

// The same for the modules that need regional NAT gateways: skipped, named, without a provider >= 6.24.0.
func TestRegionalNatModulesValidateWithTheRealProvider(t *testing.T) {
	tftest.NeedProviderVersion(t, "aws", regionalProvider)
	validateModules(t, regionalAwsModules)
}

func validateModules(t *testing.T, modules []string) {
	root := tftest.CopyModules(t, modules...)
	for _, name := range modules {
		for _, dir := range []string{"", "examples/basic"} {
			t.Run(strings.TrimSuffix(name+"/"+dir, "/"), func(t *testing.T) {
				tf := tftest.New(t, filepath.Join(root, "modules", name, dir))
				timed(t, "init", func() { tftest.Init(t, tf) })
				out, err := tf.Validate(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if !out.Valid || out.ErrorCount > 0 {
					body, _ := json.Marshal(out.Diagnostics)
					t.Fatalf("terraform validate: %s", body)
				}
			})
		}
	}
}

// `terraform test` of each AWS module's tests/*.tftest.hcl: the real provider's schema with mock_provider "aws"
// (the resources' wiring; no AWS here).
func TestAwsModulesTerraformTestUnderMockProvider(t *testing.T) {
	tftest.NeedProvider(t, "aws")
	terraformTestModules(t, awsModules)
}

// The regional module's tests/regional.tftest.hcl and aws-nat-egress's tests/dispatch.tftest.hcl, with a provider
// >= 6.24.0's schema.
func TestRegionalNatModuleTerraformTestUnderMockProvider(t *testing.T) {
	tftest.NeedProviderVersion(t, "aws", regionalProvider)
	terraformTestModules(t, regionalAwsModules)
}

func terraformTestModules(t *testing.T, modules []string) {
	root := tftest.CopyModules(t, modules...)
	for _, name := range modules {
		t.Run(name, func(t *testing.T) {
			tf := tftest.New(t, filepath.Join(root, "modules", name))
			tftest.Init(t, tf)
			var out strings.Builder
			var err error
			timed(t, "terraform test", func() { err = tf.Test(context.Background(), &out) })
			if err != nil {
				t.Fatalf("terraform test: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "0 failed") {
				t.Fatalf("terraform test:\n%s", out.String())
			}
		})
	}
}

// stateResources lists every resource of a state or plan's values, child modules included, by address.
func stateResources(module map[string]any, into map[string]map[string]any) {
	resources, _ := module["resources"].([]any)
	for _, r := range resources {
		resource := r.(map[string]any)
		values, _ := resource["values"].(map[string]any)
		into[resource["address"].(string)] = values
	}
	children, _ := module["child_modules"].([]any)
	for _, c := range children {
		stateResources(c.(map[string]any), into)
	}
}

// The user data in a real plan of the module (the provider's own aws_launch_template, base64 as EC2 takes it)
// decodes to exactly the bytes Python renders, for every valid vector: one module call per vector in one plan.
func TestEksNodeGroupPlannedUserDataIsPythonsWithTheRealProvider(t *testing.T) {
	tftest.NeedProvider(t, "aws")
	root := tftest.CopyModules(t, "eks-node-group")
	modules := map[string]any{}
	want := map[string]eksVector{}
	for _, v := range eksVectors(t) {
		if v.Expected == nil {
			continue
		}
		block := map[string]any{"source": "../modules/eks-node-group"}
		for k, val := range eksRequired {
			block[k] = val
		}
		for k, val := range v.Inputs {
			block[k] = val
		}
		block["name"] = strings.ReplaceAll(v.Name, "_", "-")
		modules[v.Name] = block
		want[v.Name] = v
	}
	config, err := json.MarshalIndent(map[string]any{"module": modules}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "plan")
	writeFile(t, filepath.Join(dir, "main.tf.json"), string(config))
	writeFile(t, filepath.Join(dir, "provider.tf"), awsProvider(""))
	tf := tftest.New(t, dir)
	tftest.Init(t, tf)
	planFile := filepath.Join(dir, "plan.out")
	timed(t, fmt.Sprintf("plan of %d node groups", len(modules)), func() {
		if _, err := tf.Plan(context.Background(), tfexecOut(planFile)); err != nil {
			t.Fatal(err)
		}
	})
	plan, err := tf.ShowPlanFile(context.Background(), planFile)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(plan.PlannedValues.RootModule)
	var rootModule map[string]any
	_ = json.Unmarshal(raw, &rootModule)
	resources := map[string]map[string]any{}
	stateResources(rootModule, resources)
	for name, v := range want {
		t.Run(name, func(t *testing.T) {
			template := resources[fmt.Sprintf("module.%s.aws_launch_template.this", name)]
			group := resources[fmt.Sprintf("module.%s.aws_eks_node_group.this", name)]
			if template == nil || group == nil {
				t.Fatalf("no launch template or node group planned for %s", name)
			}
			decoded, err := base64.StdEncoding.DecodeString(template["user_data"].(string))
			if err != nil {
				t.Fatal(err)
			}
			var userData string
			_ = json.Unmarshal(v.Expected["user_data"], &userData)
			if string(decoded) != userData {
				t.Errorf("planned user data (%d bytes) differs from Python's render (%d bytes)", len(decoded), len(userData))
			}
			var amiType string
			_ = json.Unmarshal(v.Expected["ami_type"], &amiType)
			if group["ami_type"] != amiType {
				t.Errorf("ami_type %v, want %s", group["ami_type"], amiType)
			}
			labels, _ := json.Marshal(group["labels"])
			requireSameJSON(t, "labels", labels, v.Expected["labels"])
		})
	}
}
