package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// fakeAPIServer is a stand-in for the Kubernetes API server (named as such): it answers the few core/v1
// calls the agent makes and records them. A later issue runs the agent against a real API server.
type fakeAPIServer struct {
	mu       sync.Mutex
	requests []string
	patches  map[string][]byte
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery+" "+r.Header.Get("Authorization"))
	if r.Method == http.MethodPatch {
		f.patches[r.URL.Path] = body
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/v1/nodes/"):
		fmt.Fprint(w, `{"kind":"Node","apiVersion":"v1","metadata":{"name":"node-1","resourceVersion":"1"}}`)
	case r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") == "true":
		// The SNAT attribution's pod watch: no pod ever changes; the stream stays open until the agent stops.
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case r.URL.Path == "/api/v1/pods":
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	case strings.Contains(r.URL.Path, "/events"):
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"kind":"Event","apiVersion":"v1","metadata":{"name":"e","namespace":"default"}}`)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAPIServer) annotation() (status.Report, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, ok := f.patches["/api/v1/nodes/node-1"]
	if !ok {
		return status.Report{}, false
	}
	var patch struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &patch) != nil {
		return status.Report{}, false
	}
	var rep status.Report
	if json.Unmarshal([]byte(patch.Metadata.Annotations[status.AnnotationKey]), &rep) != nil {
		return status.Report{}, false
	}
	return rep, true
}

// The daemon, given a kubeconfig, annotates its own Node through the API server and stops on cancel.
// Dry run on the host's own links: nothing on this machine is written.
func TestDaemonReportsToKubernetes(t *testing.T) {
	api := &fakeAPIServer{patches: map[string][]byte{}}
	srv := httptest.NewTLSServer(api)
	defer srv.Close()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`current-context: test
contexts: [{name: test, context: {cluster: fake, user: agent}}]
clusters: [{name: fake, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: agent, user: {token: t0ken}}]
`, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	profilePath, procSys := files(t, `{"name":"kube-test","interfaces":{"include":["wst-none*"]},
		"sysctls":{"net.core.netdev_max_backlog":32768}}`, map[string]string{"net.core.netdev_max_backlog": "1000"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"--profile", profilePath, "--proc-sys-root", procSys, "--dry-run", "--listen", "",
			"--kubeconfig", kubeconfig, "--node-name", "node-1"}, io.Discard, &stderr)
	}()
	guard := time.Now().Add(20 * time.Second)
	var rep status.Report
	for {
		var ok bool
		if rep, ok = api.annotation(); ok {
			break
		}
		if time.Now().After(guard) {
			cancel()
			<-done
			t.Fatalf("no annotation patch; requests %v\n%s", api.requests, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	api.mu.Lock()
	for _, req := range api.requests {
		// The pod watch names the node in its field selector: the API server sends only this node's pods.
		if !strings.HasSuffix(req, " Bearer t0ken") || !strings.Contains(req, "node-1") && !strings.Contains(req, "/events") ||
			strings.Contains(req, "/pods") && !strings.Contains(req, "fieldSelector=spec.nodeName%3Dnode-1") {
			t.Errorf("request %q: not the kubeconfig's token, or not about this node", req)
		}
	}
	api.mu.Unlock()
	if rep.Profile != "kube-test" || rep.State != status.StateDryRun || rep.Sysctls["net.core.netdev_max_backlog"].Current != 1000 {
		t.Fatalf("annotation %+v", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(procSys, "net/core/netdev_max_backlog")); string(b) != "1000\n" {
		t.Fatalf("dry run wrote the sysctl: %q", b)
	}
}
