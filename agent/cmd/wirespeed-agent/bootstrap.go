package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/boundedfile"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// Where Bottlerocket puts a bootstrap container's decoded `user-data` setting: host-ctr bind-mounts the
// container's persistent directory at /.bottlerocket/bootstrap-containers/current (bottlerocket-os/
// bottlerocket-core-kit, sources/host-ctr/cmd/host-ctr/main.go, withDefaultMounts; the user-data file is
// written there by the bootstrap-containers service, sources/api/bootstrap-containers).
const bottlerocketUserData = "/.bottlerocket/bootstrap-containers/current/user-data"

// maxUserData caps what is read as a profile: EC2 user data is at most 16 KB before base64
// (docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-add-user-data.html), and the bootstrap
// container's user-data is part of it; 64 KiB leaves room for other platforms without reading a huge file.
const maxUserData = 64 << 10

// runBootstrap is `wirespeed-agent bootstrap [--user-data FILE]`: apply the profile in FILE once to this
// host's links (rings, MTU, and any sysctls the profile carries), print one JSON line saying what the node
// now has, and exit. It runs before kubelet on Bottlerocket as a bootstrap container, where no boot script
// can run. Exit 0 whenever the profile was valid, even if a device could not be tuned (that is in the
// report): the boot must go on, and the DaemonSet retries later. Exit 2 only on bad flags or a bad profile,
// with nothing touched.
func runBootstrap(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	fs := flag.NewFlagSet("wirespeed-agent bootstrap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	userData := fs.String("user-data", bottlerocketUserData, "profile JSON `file` (Bottlerocket mounts the container's user-data here)")
	procSysRoot := fs.String("proc-sys-root", "/proc/sys", "`dir` holding the host's sysctls")
	sysRoot := fs.String("sys-root", "/sys", "`dir` holding the host's sysfs (SR-IOV physfn, driver fallback)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitApplied
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		log.Error("bad flags", "err", fmt.Sprintf("unexpected arguments: %v", fs.Args()))
		return exitUsage
	}
	data, err := boundedfile.Read(*userData, maxUserData)
	if err != nil {
		log.Error("user data rejected; nothing applied", "err", err)
		return exitUsage
	}
	p, err := profile.Parse(data)
	if err != nil {
		log.Error("profile rejected; nothing applied", "file", *userData, "err", err)
		return exitUsage
	}
	rep := status.Report{Profile: p.Name, State: status.StateDegraded, Time: time.Now().UTC()}
	r, et, _, err := newReconciler(p, *procSysRoot, *sysRoot, false, log)
	if err != nil {
		rep.Reason = "cannot open the ethtool socket: nothing applied"
		rep.Errors = []string{err.Error()}
	} else {
		defer func() { _ = et.Close() }()
		rep, _ = r.All()
	}
	// One line: Bottlerocket sends a host container's stdout to the journal line by line.
	line, err := json.Marshal(rep)
	if err != nil {
		log.Error("write report", "err", err)
		return exitApplied
	}
	fmt.Fprintf(stdout, "%s\n", line)
	log.Info("bootstrap done", "profile", p.Name, "state", rep.State, "reason", rep.Reason)
	return exitApplied
}

func isRegularFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
