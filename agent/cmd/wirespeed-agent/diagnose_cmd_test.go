package main

import (
	"bytes"
	"context"
	"testing"
)

// The subcommand's own flag errors exit 2 with one line naming the flag; --help exits 0. Runs in-process
// (diagnose with real sources is tested against the built binary in tests/test_diagnose.py).
func TestDiagnoseFlags(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"zero interval", []string{"diagnose", "--interval", "0s"}, 2, "diagnose: --interval 0s: must be positive\n"},
		{"extra argument", []string{"diagnose", "now"}, 2, "diagnose: unexpected arguments: [now]\n"},
		{"unreadable proc", []string{"diagnose", "--interval", "1ms", "--proc-root", "/nonexistent"}, 2,
			"diagnose: cannot read softnet_stat: open /nonexistent/net/softnet_stat: no such file or directory\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), c.args, &out, &errb); code != c.code || errb.String() != c.stderr {
				t.Fatalf("exit %d stderr %q, want %d %q", code, errb.String(), c.code, c.stderr)
			}
		})
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"diagnose", "--help"}, &out, &errb); code != 0 ||
		!bytes.Contains(errb.Bytes(), []byte("-interval duration")) {
		t.Fatalf("--help: exit %d, stderr %q", code, errb.String())
	}
}
