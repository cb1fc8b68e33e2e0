package main

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/mod/modfile"

	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
)

// DefaultRepository is where releases are published, tagged v<library version>. The rendered manifests take the
// same name from wirespeed.manifests.options.DEFAULT_IMAGE; TestDefaultRefIsTheRenderedOne holds the two together.
const DefaultRepository = "ghcr.io/wirespeed-io/wirespeed-agent"

// goBuildFlags are the agent's release build flags, also agent/Makefile's `build` (TestMakefileBuildsTheImageBits):
// no cgo (the image has no libc), no local paths or VCS stamp in the binary (the revision is an image label instead,
// and a dirty work tree must not change the bits), no symbol table or DWARF (18 MB instead of 26).
var goBuildFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// The environment of every agent build, over the caller's: a GOFLAGS=-race or GOAMD64=v3 in a shell must not change
// what the image ships. GOAMD64=v1 and GOARM64=v8.0 are Go's defaults, the oldest CPUs of each architecture.
var goBuildEnv = []string{"CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT="}

// platform is one architecture of the index.
type platform struct{ arch, variant string }

// The node pools wirespeed builds: x86-64, and arm64 for Graviton (EKS) and Cobalt/Ampere (AKS) pools. "v8" is
// the variant the OCI image-index spec names for arm64 (image-spec image-index.md, "platform.variant").
var platforms = []platform{{arch: "amd64"}, {arch: "arm64", variant: "v8"}}

// metricsPort is the agent's --listen default and the DaemonSet's containerPort (TestImageConfig), as the image
// config's ExposedPorts key.
func metricsPort() string { return strconv.Itoa(numbers.MetricsPort) + "/tcp" }

const (
	entrypoint  = "/wirespeed-agent"
	layoutDir   = "oci"
	archiveName = "wirespeed-agent.oci.tar"
)

// meta is what the image says about itself.
type meta struct {
	ref      name.Tag
	version  string
	revision string
	source   string
	created  time.Time
}

type buildOptions struct {
	out, agentDir, repoRoot, image string
}

func runBuild(ctx context.Context, args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("build", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	var o buildOptions
	fl.StringVar(&o.out, "out", "../../build/agent-image", "output directory (replaced)")
	fl.StringVar(&o.agentDir, "agent", "..", "the agent's Go module")
	fl.StringVar(&o.repoRoot, "repo", "../..", "the repository root (pyproject.toml, git)")
	fl.StringVar(&o.image, "image", "", "the name the layout gives the image (default: the release name)")
	if err := fl.Parse(args); err != nil {
		return usagef("%v (%s)", err, usage)
	}
	if fl.NArg() > 0 {
		return usagef("build takes no arguments, got %q (%s)", fl.Args(), usage)
	}
	m, err := readMeta(o)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := build(ctx, o, m)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built %s in %.1f s: index %s\n", m.ref, time.Since(start).Seconds(), res.index)
	for _, p := range res.platforms {
		fmt.Fprintf(stdout, "  linux/%s: manifest %s, layer %d bytes compressed (binary %d bytes)\n",
			p.arch, p.manifest, p.compressed, p.binary)
	}
	fmt.Fprintf(stdout, "  OCI layout %s, archive %s (%d bytes)\n",
		filepath.Join(o.out, layoutDir), filepath.Join(o.out, archiveName), res.archiveSize)
	return nil
}

// readMeta gathers the labels; every problem at once.
func readMeta(o buildOptions) (meta, error) {
	var problems []string
	var m meta
	var pyproject struct {
		Project struct{ Version string } `toml:"project"`
	}
	pyPath := filepath.Join(o.repoRoot, "pyproject.toml")
	if _, err := toml.DecodeFile(pyPath, &pyproject); err != nil || pyproject.Project.Version == "" {
		problems = append(problems, fmt.Sprintf("%s: project.version unreadable (%v); allowed: the repository root "+
			"(--repo) holding wirespeed's pyproject.toml", pyPath, err))
	}
	m.version = pyproject.Project.Version
	modPath := filepath.Join(o.agentDir, "go.mod")
	if b, err := os.ReadFile(modPath); err != nil || modfile.ModulePath(b) == "" {
		problems = append(problems, fmt.Sprintf("%s: no module path (%v); allowed: the agent's module (--agent)", modPath, err))
	} else {
		// The module path is the repository's: github.com/OWNER/REPO/agent.
		m.source = "https://" + strings.TrimSuffix(modfile.ModulePath(b), "/agent")
	}
	ref := o.image
	if ref == "" {
		ref = DefaultRepository + ":v" + m.version
	}
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		problems = append(problems, fmt.Sprintf("--image %q: %v; allowed: REGISTRY/NAME:TAG", ref, err))
	}
	m.ref = tag
	// SOURCE_DATE_EPOCH: reproducible-builds.org/specs/source-date-epoch; unset means the Unix epoch, as ko does.
	m.created = time.Unix(0, 0).UTC()
	if s, ok := os.LookupEnv("SOURCE_DATE_EPOCH"); ok {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			problems = append(problems, fmt.Sprintf("SOURCE_DATE_EPOCH %q is not allowed; allowed: whole seconds since "+
				"1970-01-01 UTC, e.g. $(git log -1 --format=%%ct), or unset for 0", s))
		}
		m.created = time.Unix(n, 0).UTC()
	}
	rev, err := revision(o.repoRoot)
	if err != nil {
		problems = append(problems, err.Error())
	}
	m.revision = rev
	if len(problems) > 0 {
		return m, usagef("%s", strings.Join(problems, "; "))
	}
	return m, nil
}

// revision is the commit, with "-dirty" when tracked files differ from it or untracked ones exist: the label must
// not claim bits the commit does not hold.
func revision(root string) (string, error) {
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("%s: no git commit to label the image with (git rev-parse HEAD: %v); allowed: a git "+
			"checkout of wirespeed", root, err)
	}
	status, err := exec.Command("git", "-C", root, "status", "--porcelain").Output()
	if err != nil {
		return "", fmt.Errorf("%s: git status: %v", root, err)
	}
	rev := strings.TrimSpace(string(head))
	if len(bytes.TrimSpace(status)) > 0 {
		rev += "-dirty"
	}
	return rev, nil
}

type platformResult struct {
	arch               string
	manifest           v1.Hash
	compressed, binary int64
}

type buildResult struct {
	index       v1.Hash
	platforms   []platformResult
	archiveSize int64
}

func build(ctx context.Context, o buildOptions, m meta) (buildResult, error) {
	var res buildResult
	work, err := os.MkdirTemp("", "wirespeed-agent-image")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(work)

	labels := map[string]string{
		// github.com/opencontainers/image-spec annotations.md, "Pre-Defined Annotation Keys".
		"org.opencontainers.image.title":       "wirespeed-agent",
		"org.opencontainers.image.description": "wirespeed node agent: NIC rings, MTU and sysctls from a tuning profile",
		"org.opencontainers.image.source":      m.source,
		"org.opencontainers.image.version":     m.version,
		"org.opencontainers.image.revision":    m.revision,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		bin := filepath.Join(work, p.arch, "wirespeed-agent")
		if err := goBuild(ctx, o.agentDir, p.arch, bin); err != nil {
			return res, err
		}
		img, pr, err := platformImage(bin, p, m, labels)
		if err != nil {
			return res, err
		}
		res.platforms = append(res.platforms, pr)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "linux", Architecture: p.arch, Variant: p.variant}}})
	}
	idx, ok := mutate.Annotations(idx, labels).(v1.ImageIndex)
	if !ok {
		return res, fmt.Errorf("mutate.Annotations returned no image index")
	}
	if res.index, err = idx.Digest(); err != nil {
		return res, err
	}

	// Written beside the output (one filesystem, so the rename cannot fail for crossing one) and renamed over it at
	// the end: a failed build leaves the last good one.
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return res, err
	}
	stage := o.out + ".partial"
	if err := os.RemoveAll(stage); err != nil {
		return res, err
	}
	defer os.RemoveAll(stage)
	lp, err := layout.Write(filepath.Join(stage, layoutDir), empty.Index)
	if err != nil {
		return res, err
	}
	// ref.name is the tag (image-spec image-layout.md); containerd's import names the image by the full reference.
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": m.ref.TagStr(),
		"io.containerd.image.name":          m.ref.String(),
	})); err != nil {
		return res, err
	}
	if res.archiveSize, err = writeArchive(filepath.Join(stage, layoutDir), filepath.Join(stage, archiveName)); err != nil {
		return res, err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return res, err
	}
	return res, os.Rename(stage, o.out)
}

func goBuild(ctx context.Context, agentDir, arch, out string) error {
	args := append([]string{"build"}, goBuildFlags...)
	args = append(args, "-o", out, "./cmd/wirespeed-agent")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = agentDir
	// exec.Cmd keeps the last of duplicate keys, so these override the caller's.
	cmd.Env = append(append(os.Environ(), goBuildEnv...), "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for linux/%s in %s: %v\n%s", arch, agentDir, err, out)
	}
	return nil
}

func platformImage(bin string, p platform, m meta, labels map[string]string) (v1.Image, platformResult, error) {
	pr := platformResult{arch: p.arch}
	layerTar, err := binaryLayer(bin, m.created)
	if err != nil {
		return nil, pr, err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return nil, pr, err
	}
	pr.binary = fi.Size()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, pr, err
	}
	created := v1.Time{Time: m.created}
	cfg := &v1.ConfigFile{
		Architecture: p.arch,
		OS:           "linux",
		Variant:      p.variant,
		Created:      created,
		Config: v1.Config{
			// The DaemonSet gives only args, and a Bottlerocket bootstrap container gives nothing: the entrypoint is
			// the agent itself.
			Entrypoint: []string{entrypoint},
			// uid 0 with only CAP_NET_ADMIN, as the DaemonSet's securityContext says: /proc/sys/net files are
			// root-owned 0644, so another uid would need CAP_DAC_OVERRIDE too (agent/README.md, "Privileges").
			User:         "0:0",
			WorkingDir:   "/",
			ExposedPorts: map[string]struct{}{metricsPort(): {}},
			Labels:       labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, pr, err
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer, History: v1.History{
		Created:   created,
		CreatedBy: "go build " + strings.Join(goBuildFlags, " ") + " ./cmd/wirespeed-agent (agent/image)",
		Comment:   "the static agent binary; no base image",
	}})
	if err != nil {
		return nil, pr, err
	}
	img, ok := mutate.Annotations(img, labels).(v1.Image)
	if !ok {
		return nil, pr, fmt.Errorf("mutate.Annotations returned no image")
	}
	if pr.manifest, err = img.Digest(); err != nil {
		return nil, pr, err
	}
	if pr.compressed, err = layer.Size(); err != nil {
		return nil, pr, err
	}
	return img, pr, nil
}

// binaryLayer is the one layer: the binary at the entrypoint, root-owned, with a fixed mtime and no user names,
// so only the binary's bytes decide the layer's digest.
func binaryLayer(bin string, mtime time.Time) ([]byte, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(entrypoint, "/"), Mode: 0o755,
		Size: int64(len(b)), ModTime: mtime, Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(b); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeArchive tars the layout directory (for `ctr images import`, `podman load`, `skopeo copy oci-archive:`,
// `docker load` from Docker 25), in name order with fixed owners and times, so it is as reproducible as the layout.
func writeArchive(dir, out string) (int64, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Strings(paths)
	f, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return 0, err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return 0, err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
		switch {
		case fi.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
		case fi.Mode().IsRegular():
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, fi.Size()
		default:
			return 0, fmt.Errorf("%s: not a regular file or directory", p)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, err
		}
		if hdr.Typeflag == tar.TypeReg {
			src, err := os.Open(p)
			if err != nil {
				return 0, err
			}
			_, err = io.Copy(tw, src)
			src.Close()
			if err != nil {
				return 0, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), f.Close()
}
