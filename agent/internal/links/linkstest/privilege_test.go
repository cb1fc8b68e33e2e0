package linkstest

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHelperNeedsNetns is not a test on its own: TestRequireNetnsPrivilege runs this binary again,
// without privilege, to watch RequireNetnsPrivilege decide (the os/exec helper-process pattern).
func TestHelperNeedsNetns(t *testing.T) {
	if os.Getenv("LINKSTEST_HELPER") != "1" {
		return
	}
	RequireNetnsPrivilege(t)
	t.Log("privileged: went on")
}

// Without privilege a netns test skips naming the reason, except under CI=true, where it fails.
func TestRequireNetnsPrivilege(t *testing.T) {
	// Copy the test binary where an unprivileged user can run it (go test's build dir is private).
	dir, err := os.MkdirTemp("", "linkstest") // t.TempDir's parent is private to this user
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "linkstest.test")
	copyFile(t, os.Args[0], bin)
	for _, tc := range []struct {
		name, ci string
		want     []string
	}{
		{"skips with the reason", "", []string{"--- SKIP: TestHelperNeedsNetns",
			"needs root to create network namespaces (missing CAP_SYS_ADMIN, CAP_NET_ADMIN; euid ",
			"): run the tests as root\n"}},
		{"fails under CI=true", "true", []string{"--- FAIL: TestHelperNeedsNetns",
			"run the tests as root; CI=true, so this is a failure, not a skip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "-test.run", "^TestHelperNeedsNetns$", "-test.v")
			cmd.Env = append(os.Environ(), "LINKSTEST_HELPER=1", "CI="+tc.ci)
			if os.Geteuid() == 0 {
				// nobody: no capabilities in the effective set after the uid change.
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			out, err := cmd.CombinedOutput()
			var exited *exec.ExitError
			if err != nil && !errors.As(err, &exited) {
				t.Fatalf("run %s: %v", bin, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Fatalf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
