package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/wirespeed-io/wirespeed/agent/internal/links/linkstest"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// One build shared by the tests (a build is two go builds and two gzips: seconds with a warm cache).
var (
	builtOnce sync.Once
	builtDir  string
	builtOut  string
	builtErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// runTool runs the command as `go run .` would, returning its exit code, stdout and stderr.
func runTool(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func built(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		if builtDir, builtErr = os.MkdirTemp("", "agent-image-test"); builtErr != nil {
			return
		}
		out := filepath.Join(builtDir, "out")
		code, stdout, stderr := runTool("build", "--out", out)
		builtOut = stdout
		if code != 0 {
			builtErr = fmt.Errorf("build exited %d:\n%s%s", code, stdout, stderr)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return filepath.Join(builtDir, "out")
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func indexOf(t *testing.T, out string) v1.ImageIndex {
	t.Helper()
	idx, err := readLayout(out)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func digestOf(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Built again into another directory, from another temporary directory and under a caller environment that
// would change the bits if it reached the go build (-race needs cgo, which the image build turns off): the same
// index digest and the same archive bytes. Another SOURCE_DATE_EPOCH must change the digest, or the timestamps
// were not the build's to fix.
func TestBuildIsReproducible(t *testing.T) {
	first := built(t)
	t.Setenv("GOFLAGS", "-race")
	t.Setenv("GOAMD64", "v3")
	t.Setenv("TMPDIR", t.TempDir())
	second := filepath.Join(t.TempDir(), "again")
	if code, stdout, stderr := runTool("build", "--out", second); code != 0 {
		t.Fatalf("second build exited %d:\n%s%s", code, stdout, stderr)
	}
	if a, b := digestOf(t, indexOf(t, first)), digestOf(t, indexOf(t, second)); a != b {
		t.Fatalf("index digests differ: %s, then %s", a, b)
	}
	if a, b := fileSHA256(t, filepath.Join(first, archiveName)), fileSHA256(t, filepath.Join(second, archiveName)); a != b {
		t.Fatalf("archives differ: sha256 %s, then %s", a, b)
	}

	t.Setenv("SOURCE_DATE_EPOCH", "1764547200")
	third := filepath.Join(t.TempDir(), "dated")
	if code, stdout, stderr := runTool("build", "--out", third); code != 0 {
		t.Fatalf("dated build exited %d:\n%s%s", code, stdout, stderr)
	}
	img := platformImageOf(t, indexOf(t, third), "amd64")
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.Created.Unix(); got != 1764547200 {
		t.Errorf("SOURCE_DATE_EPOCH 1764547200: created %d", got)
	}
	if digestOf(t, indexOf(t, third)) == digestOf(t, indexOf(t, first)) {
		t.Error("SOURCE_DATE_EPOCH did not change the digest")
	}
}

func platformImageOf(t *testing.T, idx v1.ImageIndex, arch string) v1.Image {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no linux/%s image in the index: %+v", arch, im.Manifests)
	return nil
}

// daemonSet is the agent container of the rendered default DaemonSet: what the image must run under.
type daemonSet struct {
	image        string
	args         []string
	port         int
	mounts       map[string]string // mountPath -> volume name
	runAsUser    *int64
	readOnlyRoot bool
}

func renderedDaemonSet(t *testing.T) daemonSet {
	t.Helper()
	const golden = "../../tests/golden/node-tuning/default.yaml"
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		var obj struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Name, Image string
							Args        []string
							Ports       []struct{ ContainerPort int }
							Volume      []struct{ Name, MountPath string } `json:"volumeMounts"`
							Security    struct {
								RunAsUser              *int64
								ReadOnlyRootFilesystem bool
							} `json:"securityContext"`
						}
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: %v", golden, err)
		}
		if obj.Kind != "DaemonSet" {
			continue
		}
		c := obj.Spec.Template.Spec.Containers[0]
		ds := daemonSet{image: c.Image, args: c.Args, mounts: map[string]string{}, runAsUser: c.Security.RunAsUser,
			readOnlyRoot: c.Security.ReadOnlyRootFilesystem}
		if len(c.Ports) == 1 {
			ds.port = c.Ports[0].ContainerPort
		}
		for _, m := range c.Volume {
			ds.mounts[m.MountPath] = m.Name
		}
		return ds
	}
	t.Fatalf("%s: no DaemonSet", golden)
	return daemonSet{}
}

// The default image the manifests render (from wirespeed.manifests.options.DEFAULT_IMAGE, through the golden files
// pytest keeps equal to it) is the name `make image` gives the build, as are the Terraform modules' defaults.
func TestDefaultRefIsTheRenderedOne(t *testing.T) {
	m, err := readMeta(buildOptions{agentDir: "..", repoRoot: "../.."})
	if err != nil {
		t.Fatal(err)
	}
	want := m.ref.String()
	if got := renderedDaemonSet(t).image; got != want {
		t.Errorf("tests/golden/node-tuning/default.yaml runs %s; make image names it %s", got, want)
	}
	for file, key := range map[string]string{
		"../../modules/node-tuning/manifests.tf.json":  "default_image",
		"../../modules/eks-node-group/catalog.tf.json": "default_agent_image",
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		got := findKey(doc, key)
		if len(got) == 0 {
			t.Errorf("%s: no %s", file, key)
		}
		for _, g := range got {
			if g != want {
				t.Errorf("%s: %s = %v; make image names it %s", file, key, g, want)
			}
		}
	}
}

func findKey(v any, key string) []any {
	var out []any
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == key {
				out = append(out, x)
			}
			out = append(out, findKey(x, key)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, findKey(x, key)...)
		}
	}
	return out
}

// The image fits the DaemonSet: the entrypoint is the agent (the DaemonSet gives args only), uid 0 as its
// securityContext asks, its metrics port exposed, labels naming the source, version and commit; and it is one layer
// holding one root-owned file with a fixed time.
func TestImageConfig(t *testing.T) {
	out := built(t)
	ds := renderedDaemonSet(t)
	if ds.runAsUser == nil || *ds.runAsUser != 0 || !ds.readOnlyRoot {
		t.Fatalf("the DaemonSet's securityContext changed (runAsUser %v, readOnlyRootFilesystem %v): check the "+
			"image's User and that the agent writes nothing to its root filesystem", ds.runAsUser, ds.readOnlyRoot)
	}
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	idx := indexOf(t, out)
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range im.Manifests {
		plats = append(plats, d.Platform.String())
	}
	if want := []string{"linux/amd64", "linux/arm64/v8"}; !slices.Equal(plats, want) {
		t.Fatalf("platforms %v, want %v", plats, want)
	}
	if im.Annotations["org.opencontainers.image.source"] != "https://github.com/wirespeed-io/wirespeed" {
		t.Errorf("index annotations %v", im.Annotations)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		img := platformImageOf(t, idx, arch)
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if !slices.Equal(c.Entrypoint, []string{"/wirespeed-agent"}) || len(c.Cmd) != 0 || c.User != "0:0" {
			t.Errorf("%s: entrypoint %q cmd %q user %q", arch, c.Entrypoint, c.Cmd, c.User)
		}
		if _, ok := c.ExposedPorts[fmt.Sprintf("%d/tcp", ds.port)]; !ok || len(c.ExposedPorts) != 1 {
			t.Errorf("%s: exposed %v, the DaemonSet's containerPort is %d", arch, c.ExposedPorts, ds.port)
		}
		if !slices.Contains(ds.args, fmt.Sprintf("--listen=:%d", ds.port)) {
			t.Errorf("the DaemonSet's args %q do not listen on its containerPort %d", ds.args, ds.port)
		}
		l := c.Labels
		// The version the manifests were rendered with (wirespeed.__version__), as the tag v<version> says.
		if v := l["org.opencontainers.image.version"]; ds.image != DefaultRepository+":v"+v {
			t.Errorf("%s: version label %q, the DaemonSet runs %s", arch, v, ds.image)
		}
		if rev := l["org.opencontainers.image.revision"]; strings.TrimSuffix(rev, "-dirty") != strings.TrimSpace(string(head)) {
			t.Errorf("%s: revision label %q, HEAD is %s", arch, rev, head)
		}
		if l["org.opencontainers.image.source"] != "https://github.com/wirespeed-io/wirespeed" {
			t.Errorf("%s: source label %q", arch, l["org.opencontainers.image.source"])
		}
		if cf.Created.Unix() != 0 || cf.OS != "linux" || cf.Architecture != arch {
			t.Errorf("%s: created %v os %s arch %s", arch, cf.Created, cf.OS, cf.Architecture)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: %d layers (%v), want 1", arch, len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		var names []string
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
			if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.ModTime.Unix() != 0 || h.Mode != 0o755 {
				t.Errorf("%s: %s uid %d gid %d uname %q mtime %v mode %o", arch, h.Name, h.Uid, h.Gid, h.Uname, h.ModTime, h.Mode)
			}
		}
		rc.Close()
		if !slices.Equal(names, []string{"wirespeed-agent"}) {
			t.Errorf("%s: layer holds %q", arch, names)
		}
	}
}

// unpack applies the image's layers to a new directory, refusing anything but plain files and directories under it.
func unpack(t *testing.T, img v1.Image) (string, v1.Config) {
	t.Helper()
	root := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("layer entry %q escapes the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			t.Fatalf("layer entry %q: type %c, want a file or directory", h.Name, h.Typeflag)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return root, cf.Config
}

// staticELF checks the binary is for machine and has no program interpreter: it runs on an image without libc.
func staticELF(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != machine || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
		t.Errorf("%s: machine %v class %v type %v, want %v ELFCLASS64 ET_EXEC", path, f.Machine, f.Class, f.Type, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: has %v: not a static binary", path, p.Type)
		}
	}
}

func helpOK(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-profile") || !strings.Contains(string(out), "-once") {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

const labProfile = `{"name":"lab","interfaces":{"roles":["virtual"],"include":["wst*"]},"mtu":{"value":1400},
"sysctls":{"net.core.netdev_max_backlog":32768}}`

// The amd64 image, unpacked from its layers, runs: --help, then the rendered DaemonSet's own args with --once in a
// new network namespace (and then as a Bottlerocket bootstrap container), chrooted into the image's root (nothing of the host's filesystem: no libc, no /etc), with
// the DaemonSet's mounts made the way the kubelet makes them: the profile at its ConfigMap path, sysfs at /host/sys,
// and /host/proc/sys a directory of files (the real net.core.netdev_max_backlog is the host's, not the namespace's).
func TestAMD64ImageRunsFromItsLayers(t *testing.T) {
	root, cfg := unpack(t, platformImageOf(t, indexOf(t, built(t)), "amd64"))
	bin := filepath.Join(root, cfg.Entrypoint[0])
	staticELF(t, bin, elf.EM_X86_64)
	helpOK(t, exec.Command(bin, "--help"))

	linkstest.RequireNetnsPrivilege(t)
	ds := renderedDaemonSet(t)
	flags := map[string]string{}
	for _, a := range ds.args {
		k, v, _ := strings.Cut(a, "=")
		flags[k] = v
	}
	profile, procSys, sysRoot := flags["--profile"], flags["--proc-sys-root"], flags["--sys-root"]
	if ds.mounts[filepath.Dir(profile)] == "" || ds.mounts[procSys+"/net"] == "" || ds.mounts[sysRoot] == "" {
		t.Fatalf("the DaemonSet's args %q and mounts %v no longer match", ds.args, ds.mounts)
	}
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(profile, labProfile)
	backlog := filepath.Join(procSys, "net/core/netdev_max_backlog")
	write(backlog, "1000\n")
	for _, d := range []string{sysRoot, "/proc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	const ns = "wst-agent-image"
	_ = exec.Command("ip", "netns", "del", ns).Run() // a leftover from a killed run
	sh(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	sh(t, "ip", "-n", ns, "link", "set", "lo", "up")
	sh(t, "ip", "-n", ns, "link", "add", "wstm0", "type", "veth", "peer", "name", "wstm1")

	// `ip netns exec` runs in a mount namespace of its own (slave to the host's), so these mounts end with it.
	script := `mount -t sysfs sysfs "$0$1" && mount -t proc proc "$0/proc" && shift && exec chroot "$0" "$@"`
	args := append([]string{"netns", "exec", ns, "sh", "-c", script, root, sysRoot, cfg.Entrypoint[0]}, ds.args...)
	args = append(args, "--once", "--kube=false")
	cmd := exec.Command("ip", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstdout: %s\nstderr: %s", cmd.Args, err, stdout.String(), stderr.String())
	}
	var rep status.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if rep.State != status.StateApplied || rep.Profile != "lab" || len(rep.Interfaces) != 2 {
		t.Fatalf("report %+v\nstderr: %s", rep, stderr.String())
	}
	var links []struct{ MTU int }
	if err := json.Unmarshal([]byte(sh(t, "ip", "-n", ns, "-j", "link", "show", "wstm0")), &links); err != nil || len(links) != 1 || links[0].MTU != 1400 {
		t.Errorf("wstm0: %+v (%v), want MTU 1400", links, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, backlog)); string(b) != "32768\n" {
		t.Errorf("%s: %q, want 32768", backlog, b)
	}

	// As Bottlerocket's bootstrap container: the entrypoint alone, no args, the profile where Bottlerocket mounts the
	// decoded user-data, sysfs at /sys. The profile has no sysctls (wirespeed renders the bootstrap profile without
	// them), so the host's /proc/sys is neither mounted nor touched.
	write("/.bottlerocket/bootstrap-containers/current/user-data",
		`{"name":"lab-bootstrap","interfaces":{"roles":["virtual"],"include":["wst*"]},"mtu":{"value":1300}}`)
	if err := os.MkdirAll(filepath.Join(root, "sys"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("ip", "netns", "exec", ns, "sh", "-c", `mount -t sysfs sysfs "$0/sys" && exec chroot "$0" "$@"`,
		root, cfg.Entrypoint[0])
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstdout: %s\nstderr: %s", cmd.Args, err, stdout.String(), stderr.String())
	}
	rep = status.Report{}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || strings.Count(stdout.String(), "\n") != 1 {
		t.Fatalf("bootstrap report, want one JSON line: %v\n%s", err, stdout.String())
	}
	if rep.State != status.StateApplied || rep.Profile != "lab-bootstrap" {
		t.Fatalf("bootstrap report %+v\nstderr: %s", rep, stderr.String())
	}
	links = nil
	if err := json.Unmarshal([]byte(sh(t, "ip", "-n", ns, "-j", "link", "show", "wstm0")), &links); err != nil || len(links) != 1 || links[0].MTU != 1300 {
		t.Errorf("wstm0 after bootstrap: %+v (%v), want MTU 1300", links, err)
	}
}

func sh(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The arm64 image holds a static aarch64 binary, and it runs under QEMU's user-mode emulator (Debian's qemu-user,
// which scripts/install-system-deps.sh installs; called directly, so no binfmt_misc registration is needed).
func TestARM64ImageRunsUnderQEMU(t *testing.T) {
	root, cfg := unpack(t, platformImageOf(t, indexOf(t, built(t)), "arm64"))
	bin := filepath.Join(root, cfg.Entrypoint[0])
	staticELF(t, bin, elf.EM_AARCH64)
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		msg := "needs qemu-aarch64 (Debian package qemu-user: make system-deps) to run the arm64 binary"
		if linkstest.InCI() {
			t.Fatal(msg + "; CI=true, so this is a failure, not a skip")
		}
		t.Skip(msg)
	}
	helpOK(t, exec.Command(qemu, bin, "--help"))
}

// quietRegistry is ggcr's in-memory registry, the reference implementation of the distribution API it pushes to,
// on a loopback port (ggcr speaks plain HTTP to 127.0.0.1, as to localhost).
func quietRegistry(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// `push` writes the built index to a registry; pulled back, the index, each platform's manifest and each layer have
// the digests of the layout, and the tag resolves per platform to the right architecture.
func TestPushToARegistry(t *testing.T) {
	out := built(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of the machine's: an anonymous push
	host := quietRegistry(t, registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	ref := host + "/team/wirespeed-agent:v0.1.0-test"
	code, stdout, stderr := runTool("push", "--from", out, ref)
	if code != 0 {
		t.Fatalf("push exited %d:\n%s%s", code, stdout, stderr)
	}
	local := indexOf(t, out)
	want := digestOf(t, local)
	if !strings.Contains(stdout, "pin it: --image "+host+"/team/wirespeed-agent@"+want.String()) {
		t.Errorf("push output does not give the digest to pin:\n%s", stdout)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	remoteIdx, err := remote.Index(tag)
	if err != nil {
		t.Fatal(err)
	}
	if got := digestOf(t, remoteIdx); got != want {
		t.Fatalf("registry serves index %s, built %s", got, want)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := remote.Image(tag, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: arch}))
		if err != nil {
			t.Fatal(err)
		}
		localImg := platformImageOf(t, local, arch)
		gd, _ := img.Digest()
		wd, _ := localImg.Digest()
		if gd != wd {
			t.Errorf("%s: registry serves %s, built %s", arch, gd, wd)
		}
		gl, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		blob, err := gl[0].Compressed()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, blob); err != nil {
			t.Fatal(err)
		}
		blob.Close()
		ll, _ := localImg.Layers()
		ld, _ := ll[0].Digest()
		if got := fmt.Sprintf("sha256:%x", h.Sum(nil)); got != ld.String() {
			t.Errorf("%s: layer pulled back hashes to %s, built %s", arch, got, ld)
		}
	}
}

// A registry that refuses the credentials gets the user error that says how to log in, not a stack of HTTP.
func TestPushRefusedSaysHowToLogIn(t *testing.T) {
	out := built(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := quietRegistry(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	code, stdout, stderr := runTool("push", "--from", out, host+"/wirespeed-agent:v1")
	if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: IMAGE "+host) ||
		!strings.Contains(stderr, "docker login "+host) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// Bad input is refused before anything is built or sent, one `error:` line naming it, exit 2.
func TestBadInputIsOneErrorLine(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{name: "no command", want: []string{"a command is required", "build, push"}},
		{name: "unknown command", args: []string{"publish"}, want: []string{`"publish" is not allowed`}},
		{name: "push without image", args: []string{"push"}, want: []string{"IMAGE: one image reference is required", "REGISTRY/NAME:TAG"}},
		{name: "push without registry", args: []string{"push", "wirespeed-agent:v1"}, want: []string{`IMAGE "wirespeed-agent:v1"`, "registry"}},
		{name: "push without tag", args: []string{"push", "registry.example.com/wirespeed-agent"}, want: []string{"tag", "REGISTRY/NAME:TAG"}},
		{name: "push by digest", args: []string{"push", "registry.example.com/a@sha256:" + strings.Repeat("0", 64)}, want: []string{"push by tag"}},
		{name: "push before build", args: []string{"push", "--from", missing, "registry.example.com/a:v1"}, want: []string{"no OCI layout", "make image"}},
		{name: "build: every bad input at once", env: map[string]string{"SOURCE_DATE_EPOCH": "yesterday"},
			args: []string{"build", "--out", missing, "--image", "Bad Name"}, want: []string{`SOURCE_DATE_EPOCH "yesterday"`, `--image "Bad Name"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			code, stdout, stderr := runTool(c.args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: ") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was written", missing)
			}
		})
	}
}

// `make build` (the binary the other tests and the QEMU guests run) uses the image's build flags, so what is tested
// is what ships.
func TestMakefileBuildsTheImageBits(t *testing.T) {
	cmd := exec.Command("make", "-s", "-n", "--no-print-directory", "-C", "..", "build", "GO=go")
	// Run from `make test`, the outer make's flags (-k, -j, -w) would reach this one.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
	})
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	words := shellWords(strings.TrimSpace(string(out)))
	i, j := slices.Index(words, "build"), slices.Index(words, "-o")
	if !slices.Contains(words, "CGO_ENABLED=0") || i < 0 || j < i {
		t.Fatalf("make build runs %q", words)
	}
	if got := words[i+1 : j]; !slices.Equal(got, goBuildFlags) {
		t.Errorf("make build's flags %q, the image's %q", got, goBuildFlags)
	}
}

// shellWords splits a command line on blanks, honouring double quotes (all `make -n` prints here).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t' || r == '\n') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

type recordingTransport struct{ hosts []string }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.hosts = append(r.hosts, req.URL.Scheme+"://"+req.URL.Host)
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

// Plain HTTP goes only to this machine; HTTPS anywhere. The refused requests never reach the network (the next
// transport records what it is given).
func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	next := &recordingTransport{}
	tr := loopbackHTTPOnly{next}
	for _, u := range []string{"http://127.0.0.1:5000/v2/", "http://localhost:5000/v2/", "http://[::1]:5000/v2/",
		"https://10.1.2.3:5000/v2/", "https://registry.example.com/v2/"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := tr.RoundTrip(req); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.1.2.3:5000/v2/", "http://registry.local/v2/", "http://192.168.1.1/v2/",
		"http://127.0.0.1.example.com/v2/"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "refusing plain HTTP") {
			t.Errorf("%s: %v, want refused", u, err)
		}
	}
	if len(next.hosts) != 5 {
		t.Errorf("sent %v", next.hosts)
	}
}
