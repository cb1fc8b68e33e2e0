package boundedfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadsARegularFileWithinTheLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(path, []byte(`{"name":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := Read(path, 12)
	if err != nil || string(data) != `{"name":"x"}` {
		t.Fatalf("got %q, %v", data, err)
	}
	if _, err := Read(path, 11); err == nil || !strings.Contains(err.Error(), "more than the 11 allowed") {
		t.Fatalf("oversized file: %v", err)
	}
}

func TestRefusesWhatIsNotARegularFileAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "a FIFO (named pipe)", // no writer: os.ReadFile would block here for ever
		"/dev/zero": "a character device",  // os.ReadFile would read until memory ran out
		dir:         "a directory",
	} {
		_, err := Read(path, 1<<20)
		if err == nil || !strings.Contains(err.Error(), path+": is "+want) {
			t.Errorf("%s: %v", path, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "absent"), 10); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
