package tftest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHelperNeedProvider is not a test on its own: TestNeedProviderUnderCI runs this binary again to watch
// NeedProvider decide (the os/exec helper-process pattern).
func TestHelperNeedProvider(t *testing.T) {
	name := os.Getenv("TFTEST_HELPER_PROVIDER")
	if name == "" {
		return
	}
	if minimum := os.Getenv("TFTEST_HELPER_MINIMUM"); minimum != "" {
		NeedProviderVersion(t, name, minimum)
	} else {
		NeedProvider(t, name)
	}
	t.Log("provider present: went on")
}

// A missing provider skips with its name; under CI=true it fails unless tests/allowed-skips.json names it.
func TestNeedProviderUnderCI(t *testing.T) {
	for _, tc := range []struct {
		name, provider, minimum, ci string
		want                        string
	}{
		{"not allow-listed, locally: skip", "google", "", "", "--- SKIP: TestHelperNeedProvider"},
		{"not allow-listed, CI: fail", "google", "", "true", "--- FAIL: TestHelperNeedProvider"},
		{"allow-listed, CI: skip", "kubernetes", "", "true", "--- SKIP: TestHelperNeedProvider"},
		// A release no mirror can hold: the entry names 6.24.0, not any version.
		{"version not allow-listed, CI: fail", "aws", "999.0.0", "true", "--- FAIL: TestHelperNeedProvider"},
		{"version not allow-listed, locally: skip", "aws", "999.0.0", "", "--- SKIP: TestHelperNeedProvider"},
		{"version allow-listed, CI: skip", "aws", "6.24.0", "true", "--- SKIP: TestHelperNeedProvider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			address := "hashicorp/" + tc.provider
			if tc.minimum != "" {
				address += " >= " + tc.minimum
			}
			want := []string{tc.want, "needs the Terraform provider " + address + " in a plugin mirror"}
			if tc.minimum == "" && HasProvider(tc.provider) || tc.minimum != "" && hasVersion(tc.provider, tc.minimum) {
				want = []string{"provider present: went on"}
			}
			cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperNeedProvider$", "-test.v")
			cmd.Env = append(os.Environ(), "TFTEST_HELPER_PROVIDER="+tc.provider, "TFTEST_HELPER_MINIMUM="+tc.minimum, "CI="+tc.ci)
			out, err := cmd.CombinedOutput()
			var exited *exec.ExitError
			if err != nil && !errors.As(err, &exited) {
				t.Fatalf("run %s: %v", os.Args[0], err)
			}
			for _, w := range want {
				if !strings.Contains(string(out), w) {
					t.Fatalf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// The allow-list is the one tests/conftest.py and scripts/testreport.py read: exactly the providers CI cannot get.
func TestAllowedMissingProviders(t *testing.T) {
	for address, want := range map[string]bool{
		"hashicorp/azurerm": true, "hashicorp/kubernetes": true, "hashicorp/aws": false,
		"hashicorp/aws >= 6.24.0": true, "hashicorp/aws >= 6.25.0": false,
	} {
		if got := AllowedMissingProvider(t, address); got != want {
			t.Errorf("AllowedMissingProvider(%s) = %v, want %v", address, got, want)
		}
	}
}

func hasVersion(name, minimum string) bool {
	_, ok := heldVersions(name, minimum)
	return ok
}
