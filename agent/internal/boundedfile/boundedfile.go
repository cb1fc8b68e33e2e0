// Package boundedfile reads a file named on the command line as hostile input: only a regular file, and
// never more than a stated number of bytes. A FIFO with no writer would block os.ReadFile forever and
// /dev/zero would fill memory; both are refused at once with an error that names the path.
package boundedfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Read returns the contents of the regular file at path, refusing anything else or more than limit bytes.
func Read(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO for reading does not wait for a writer; it is refused below.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: is %s, not a regular file", path, kind(info.Mode()))
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: is %d bytes, more than the %d allowed", path, info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew past the %d bytes allowed while it was read", path, limit)
	}
	return data, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	default:
		return "not a regular file"
	}
}
