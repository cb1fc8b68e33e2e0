package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Hostile --profile, --listen and --kubeconfig values end the agent with exit 2 before anything is applied, at
// once: a FIFO with no writer, /dev/zero, a directory, a malformed or taken address, an unreadable kubeconfig.
func TestHostileFlagsExit2BeforeAnythingIsApplied(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "profile.json")
	if err := os.WriteFile(good, []byte(labProfile), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	cases := map[string]struct {
		args []string
		want string
	}{
		"profile fifo":        {[]string{"--profile", fifo}, "a FIFO (named pipe)"},
		"profile /dev/zero":   {[]string{"--profile", "/dev/zero"}, "a character device"},
		"profile directory":   {[]string{"--profile", dir}, "a directory"},
		"listen malformed":    {[]string{"--profile", good, "--listen", "nonsense"}, `--listen \"nonsense\"`},
		"listen bad port":     {[]string{"--profile", good, "--listen", ":99999"}, `--listen \":99999\"`},
		"listen taken":        {[]string{"--profile", good, "--listen", taken.Addr().String()}, "address already in use"},
		"kubeconfig missing":  {[]string{"--profile", good, "--listen", "", "--kubeconfig", filepath.Join(dir, "absent")}, "no such file"},
		"kubeconfig fifo":     {[]string{"--profile", good, "--listen", "", "--kubeconfig", fifo}, "a FIFO (named pipe)"},
		"kubeconfig not yaml": {[]string{"--profile", good, "--listen", "", "--kubeconfig", good}, "--kubeconfig"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- run(context.Background(), c.args, &stdout, &stderr) }()
			select {
			case code := <-done:
				if code != exitUsage {
					t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("still running after 10 s: %s", stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("stderr %s does not say %q", stderr.String(), c.want)
			}
		})
	}
}
