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
	NeedProvider(t, name)
	t.Log("provider present: went on")
}

// A missing provider skips with its name; under CI=true it fails unless tests/allowed-skips.json names it.
func TestNeedProviderUnderCI(t *testing.T) {
	for _, tc := range []struct {
		name, provider, ci string
		want               string
	}{
		{"not allow-listed, locally: skip", "google", "", "--- SKIP: TestHelperNeedProvider"},
		{"not allow-listed, CI: fail", "google", "true", "--- FAIL: TestHelperNeedProvider"},
		{"allow-listed, CI: skip", "kubernetes", "true", "--- SKIP: TestHelperNeedProvider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := []string{tc.want, "needs the Terraform provider hashicorp/" + tc.provider + " in a plugin mirror"}
			if HasProvider(tc.provider) {
				want = []string{"provider present: went on"}
			}
			cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperNeedProvider$", "-test.v")
			cmd.Env = append(os.Environ(), "TFTEST_HELPER_PROVIDER="+tc.provider, "CI="+tc.ci)
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
	for address, want := range map[string]bool{"hashicorp/azurerm": true, "hashicorp/kubernetes": true, "hashicorp/aws": false} {
		if got := AllowedMissingProvider(t, address); got != want {
			t.Errorf("AllowedMissingProvider(%s) = %v, want %v", address, got, want)
		}
	}
}
