// Package sysctl reads and writes integer sysctls under a configurable /proc/sys root: the DaemonSet
// mounts the host's /proc/sys/net into the container, so the root is a flag, not a constant.
package sysctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Path maps a dotted name to its file: net.core.netdev_max_backlog -> <root>/net/core/netdev_max_backlog.
func Path(root, name string) string {
	return filepath.Join(root, filepath.FromSlash(strings.ReplaceAll(name, ".", "/")))
}

// Read returns the integer value of a sysctl.
func Read(root, name string) (int64, error) {
	data, err := os.ReadFile(Path(root, name))
	if err != nil {
		return 0, fmt.Errorf("read sysctl %s: %w", name, err)
	}
	return parse(name, string(data))
}

func parse(name, text string) (int64, error) {
	fields := strings.Fields(text)
	if len(fields) != 1 {
		return 0, fmt.Errorf("sysctl %s holds %q: not a single integer", name, strings.TrimSpace(text))
	}
	v, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sysctl %s holds %q: not a single integer", name, fields[0])
	}
	return v, nil
}

// Write sets a sysctl. The kernel validates the value; its refusal comes back as the error.
func Write(root, name string, value int64) error {
	// O_WRONLY without O_CREATE: a missing sysctl is an error, never a new file under /proc/sys.
	f, err := os.OpenFile(Path(root, name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("write sysctl %s: %w", name, err)
	}
	if _, err := f.WriteString(strconv.FormatInt(value, 10) + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write sysctl %s=%d: %w", name, value, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write sysctl %s=%d: %w", name, value, err)
	}
	return nil
}

// Ensure brings a sysctl to value, writing only when it differs. It returns the value found before and
// whether it wrote (or, with dryRun, would have written).
func Ensure(root, name string, value int64, dryRun bool) (before int64, changed bool, err error) {
	before, err = Read(root, name)
	if err != nil {
		return 0, false, err
	}
	if before == value {
		return before, false, nil
	}
	if dryRun {
		return before, true, nil
	}
	if err := Write(root, name, value); err != nil {
		return before, false, err
	}
	return before, true, nil
}
