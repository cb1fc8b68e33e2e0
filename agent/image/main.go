// Command image builds the wirespeed agent's OCI image without a container engine, and pushes it.
//
//	go run . build [--out DIR] [--image REF]     (make image)
//	go run . push --from DIR REGISTRY/NAME:TAG   (make push IMAGE=...)
//
// The image is the static agent binary on an empty base, for linux/amd64 and linux/arm64, as one OCI image index,
// written as an OCI layout directory and the same layout as a tar archive. It is reproducible: the same commit and
// Go toolchain give the same digest (README.md, "Build and test").
//
// Exit codes: 0 done, 2 a user error (one `error:` line naming the input, the value, what is allowed and the fix;
// nothing written), 1 a failure of this tool or of the agent's build.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// userError is an input the user can fix; it exits 2 with one line.
type userError struct{ msg string }

func (e *userError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &userError{fmt.Sprintf(format, args...)} }

const usage = "usage: image build [--out DIR] [--image REF]; image push [--from DIR] [--timeout DURATION] REGISTRY/NAME:TAG"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) == 0:
		err = usagef("a command is required; allowed: build, push (%s)", usage)
	case args[0] == "build":
		err = runBuild(ctx, args[1:], stdout)
	case args[0] == "push":
		err = runPush(ctx, args[1:], stdout)
	default:
		err = usagef("command %q is not allowed; allowed: build, push (%s)", args[0], usage)
	}
	if err == nil {
		return 0
	}
	var ue *userError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "error: %s\n", ue.msg)
		return 2
	}
	fmt.Fprintf(stderr, "image: %v\n", err)
	return 1
}
