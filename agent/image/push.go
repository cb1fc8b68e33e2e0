package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const pushUsage = "allowed: REGISTRY/NAME:TAG with the registry and the tag spelled out, e.g. " +
	"registry.example.com/wirespeed-agent:v0.1.0 (make push IMAGE=registry.example.com/wirespeed-agent:v0.1.0)"

func runPush(ctx context.Context, args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("push", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	from := fl.String("from", "../../build/agent-image", "the output directory of `build`")
	timeout := fl.Duration("timeout", 10*time.Minute, "deadline for the whole push")
	if err := fl.Parse(args); err != nil {
		return usagef("%v (%s)", err, usage)
	}
	if fl.NArg() != 1 || fl.Arg(0) == "" {
		return usagef("IMAGE: one image reference is required, got %q; %s", fl.Args(), pushUsage)
	}
	if *timeout <= 0 {
		return usagef("--timeout %s: must be positive", *timeout)
	}
	ref := fl.Arg(0)
	if last := ref[strings.LastIndex(ref, "/")+1:]; !strings.Contains(last, ":") && !strings.Contains(ref, "@") {
		return usagef("IMAGE %q has no tag; %s", ref, pushUsage)
	}
	tag, err := name.NewTag(ref, name.StrictValidation)
	if err != nil {
		hint := ""
		if strings.Contains(ref, "@") {
			hint = " (push by tag: the digest is the image's own, printed after the push, and is what to pin)"
		}
		return usagef("IMAGE %q: %v; %s%s", ref, err, pushUsage, hint)
	}
	idx, err := readLayout(*from)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	digest, err := push(ctx, tag, idx)
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s: index %s\n", tag, digest)
	for _, d := range im.Manifests {
		if d.Platform != nil {
			fmt.Fprintf(stdout, "  %s/%s: %s\n", d.Platform.OS, d.Platform.Architecture, d.Digest)
		}
	}
	fmt.Fprintf(stdout, "pin it: --image %s@%s (or the tag %s)\n", tag.Context(), digest, tag)
	return nil
}

// readLayout is the one image index `build` wrote, refusing anything else.
func readLayout(dir string) (v1.ImageIndex, error) {
	lp := filepath.Join(dir, layoutDir)
	if fi, err := os.Stat(filepath.Join(lp, "index.json")); err != nil || !fi.Mode().IsRegular() {
		return nil, usagef("--from %s: no OCI layout at %s (%v); run `make image` first (make push does)", dir, lp, err)
	}
	p, err := layout.FromPath(lp)
	if err != nil {
		return nil, usagef("--from %s: %v; run `make image` again", dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, usagef("--from %s: %v; run `make image` again", dir, err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		return nil, usagef("--from %s: %v; run `make image` again", dir, err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].MediaType != types.OCIImageIndex {
		return nil, usagef("--from %s: the layout holds %d entries, not the one image index `make image` writes; "+
			"run `make image` again", dir, len(im.Manifests))
	}
	return top.ImageIndex(im.Manifests[0].Digest)
}

// push writes the index and every image and blob in it under tag, with the credentials docker, podman and crane
// use (authn.DefaultKeychain: $DOCKER_CONFIG/config.json, its credential helpers), and returns the digest the
// registry then serves for the tag.
func push(ctx context.Context, tag name.Tag, idx v1.ImageIndex) (v1.Hash, error) {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithUserAgent("wirespeed-agent-image"), remote.WithTransport(loopbackHTTPOnly{remote.DefaultTransport})}
	want, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.WriteIndex(tag, idx, opts...); err != nil {
		return v1.Hash{}, pushError(tag, err)
	}
	// Read back: a registry or proxy that rewrote the manifest would serve other bits than those built and tested.
	desc, err := remote.Head(tag, opts...)
	if err != nil {
		return v1.Hash{}, pushError(tag, err)
	}
	if desc.Digest != want {
		return v1.Hash{}, fmt.Errorf("%s: the registry serves %s for the tag, not the pushed index %s", tag, desc.Digest, want)
	}
	return want, nil
}

func pushError(tag name.Tag, err error) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == 401 || te.StatusCode == 403) {
		return usagef("IMAGE %s: the registry refused the push (%v); log in first (docker login %s, podman login, "+
			"crane auth login: any of them writes ~/.docker/config.json, which this push reads)", tag, err, tag.RegistryStr())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return usagef("IMAGE %s: not pushed within --timeout (%v); allowed: a registry that answers, or a larger --timeout", tag, err)
	}
	return usagef("IMAGE %s: push failed: %v", tag, err)
}

// loopbackHTTPOnly refuses plain HTTP except to this machine. ggcr falls back to HTTP when HTTPS fails for a
// registry on a private (RFC 1918) address or a .local name too (pkg/name/registry.go Scheme, pkg/v1/remote/
// transport/ping.go), which would send the login's credentials and the image in clear text across a network.
type loopbackHTTPOnly struct{ next http.RoundTripper }

func (l loopbackHTTPOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" && !isLoopback(r.URL.Hostname()) {
		return nil, fmt.Errorf("refusing plain HTTP to %s: only a registry on this machine (localhost, 127.0.0.0/8, "+
			"::1) is spoken to without TLS", r.URL.Host)
	}
	return l.next.RoundTrip(r)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
