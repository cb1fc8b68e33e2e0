package sysctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestEnsureOnTemporaryTree(t *testing.T) {
	cases := []struct {
		name        string
		file        string
		value       int64
		dryRun      bool
		wantBefore  int64
		wantChanged bool
		wantFile    string
		wantErr     string
	}{
		{name: "writes when different", file: "1000\n", value: 32768, wantBefore: 1000, wantChanged: true, wantFile: "32768\n"},
		{name: "leaves equal value alone", file: "32768\n", value: 32768, wantBefore: 32768, wantFile: "32768\n"},
		{name: "dry run reports drift only", file: "1000\n", value: 32768, dryRun: true, wantBefore: 1000, wantChanged: true, wantFile: "1000\n"},
		{name: "multi-value sysctl refused", file: "4096\t131072\t6291456\n", value: 1, wantErr: "not a single integer", wantFile: "4096\t131072\t6291456\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := tree(t, map[string]string{"net/core/netdev_max_backlog": c.file})
			before, changed, err := Ensure(root, "net.core.netdev_max_backlog", c.value, c.dryRun)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if before != c.wantBefore || changed != c.wantChanged {
				t.Errorf("before %d changed %v, want %d %v", before, changed, c.wantBefore, c.wantChanged)
			}
			got, _ := os.ReadFile(filepath.Join(root, "net/core/netdev_max_backlog"))
			if string(got) != c.wantFile {
				t.Errorf("file %q, want %q", got, c.wantFile)
			}
		})
	}
}

func TestMissingSysctlIsNotCreated(t *testing.T) {
	root := tree(t, map[string]string{"net/core/somaxconn": "4096\n"})
	if _, _, err := Ensure(root, "net.core.no_such_sysctl", 1, false); err == nil {
		t.Fatal("want error for a missing sysctl")
	}
	if _, err := os.Stat(filepath.Join(root, "net/core/no_such_sysctl")); !os.IsNotExist(err) {
		t.Fatal("a missing sysctl was created as a file")
	}
}

// The real host sysctl, through the real /proc/sys: the value is restored whatever happens.
func TestRealHostNetdevMaxBacklog(t *testing.T) {
	const name = "net.core.netdev_max_backlog"
	orig, err := Read("/proc/sys", name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Write("/proc/sys", name, orig); err != nil {
			t.Errorf("restore %s=%d: %v", name, orig, err)
		}
	})
	target := orig + 1234
	before, changed, err := Ensure("/proc/sys", name, target, false)
	if err != nil {
		t.Fatal(err)
	}
	if before != orig || !changed {
		t.Fatalf("before %d changed %v, want %d true", before, changed, orig)
	}
	if got, _ := Read("/proc/sys", name); got != target {
		t.Fatalf("kernel holds %d, want %d", got, target)
	}
	if _, changed, _ := Ensure("/proc/sys", name, target, false); changed {
		t.Fatal("rewrote an equal value")
	}
}
