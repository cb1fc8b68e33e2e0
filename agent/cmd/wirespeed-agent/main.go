// Command wirespeed-agent keeps a node's NIC rings, global network sysctls and opt-in MTU at the values of
// a wirespeed tuning profile, re-applying them when links appear (an SR-IOV VF re-added by host servicing
// comes back at driver-default rings), and reports what it applied as metrics, a Node annotation, a Node
// condition and Events. See agent/README.md for the flags and the choices behind them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/wirespeed-io/wirespeed/agent/internal/ethioctl"
	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/metrics"
	"github.com/wirespeed-io/wirespeed/agent/internal/nodestatus"
	"github.com/wirespeed-io/wirespeed/agent/internal/numbers"
	"github.com/wirespeed-io/wirespeed/agent/internal/probe"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/reconcile"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
)

// Exit codes.
const (
	exitApplied  = 0
	exitDegraded = 1 // --once: something could not be applied
	exitUsage    = 2 // bad flags or an invalid profile: nothing was touched
)

type options struct {
	profile     string
	procSysRoot string
	sysRoot     string
	once        bool
	dryRun      bool
	resync      time.Duration
	debounce    time.Duration
	listen      string
	nodeName    string
	kube        bool
	kubeconfig  string
	snat        snatOptions
	fleet       fleetOptions
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("wirespeed-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: wirespeed-agent --profile FILE [flags]\n"+
			"       wirespeed-agent diagnose [--interval 10s] [--json]   (which known cause drops packets now)\n"+
			"       wirespeed-agent probe [--listen ADDR] [--peer ADDR,...] [--streams "+strconv.Itoa(probe.DefaultStreams)+"] [--duration 10s] [--rate 10] [--json]\n\nflags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.profile, "profile", "", "profile JSON `file` (required)")
	fs.StringVar(&o.procSysRoot, "proc-sys-root", "/proc/sys", "`dir` holding the host's sysctls (the DaemonSet mounts the host's /proc/sys/net there)")
	fs.StringVar(&o.sysRoot, "sys-root", "/sys", "`dir` holding the host's sysfs (SR-IOV physfn, driver fallback)")
	fs.BoolVar(&o.once, "once", false, "reconcile once, print the status report JSON to stdout, exit 0 if applied, 1 if degraded")
	fs.BoolVar(&o.dryRun, "dry-run", false, "never write; report drift")
	fs.DurationVar(&o.resync, "resync", 60*time.Second, "period of the full reconcile that catches changes made by others")
	fs.DurationVar(&o.debounce, "debounce", 100*time.Millisecond, "per-link settle window after link events")
	fs.StringVar(&o.listen, "listen", ":"+strconv.Itoa(numbers.MetricsPort), "`addr` for /metrics, /healthz, /readyz; empty disables")
	fs.StringVar(&o.nodeName, "node-name", os.Getenv("NODE_NAME"), "this node's `name` (default $NODE_NAME)")
	fs.BoolVar(&o.kube, "kube", true, "report to Kubernetes (in-cluster, or with --kubeconfig)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `file` (default: in-cluster service account)")
	o.snat.register(fs)
	o.fleet.register(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := o.snat.check(fs); err != nil {
		return o, err
	}
	o.fleet.visit(fs)
	if err := o.fleet.check(); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if o.profile == "" {
		return o, errors.New("--profile is required")
	}
	if o.resync <= 0 {
		return o, fmt.Errorf("--resync %s: must be positive", o.resync)
	}
	if o.debounce <= 0 || o.debounce > o.resync {
		return o, fmt.Errorf("--debounce %s: must be positive and at most --resync (%s)", o.debounce, o.resync)
	}
	return o, nil
}

func main() {
	// SIGTERM (kubelet stopping the pod) cancels the loop; nothing is rolled back.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "diagnose" {
		return runDiagnose(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "probe" {
		return runProbe(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "bootstrap" {
		return runBootstrap(args[1:], stdout, stderr)
	}
	// A Bottlerocket bootstrap container runs the image's entrypoint with no arguments (its settings have no
	// command field); the user data Bottlerocket mounts for it says what to apply.
	if len(args) == 0 && isRegularFile(bottlerocketUserData) {
		return runBootstrap(nil, stdout, stderr)
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitApplied
		}
		log.Error("bad flags", "err", err)
		return exitUsage
	}
	// The whole profile is validated before anything is touched: a bad profile changes nothing.
	p, err := profile.Load(o.profile)
	if err != nil {
		log.Error("profile rejected; nothing applied", "err", err)
		return exitUsage
	}
	if err := o.fleet.fromProfile(p.Probe); err != nil {
		log.Error("bad flags for the profile's probe section; nothing applied", "err", err)
		return exitUsage
	}
	ln, err := preflight(o)
	if err != nil {
		log.Error("bad flags; nothing applied", "err", err)
		return exitUsage
	}
	defer closeListener(ln) // after shutdown (Close again is harmless); on every early return
	r, et, nl, err := newReconciler(p, o.procSysRoot, o.sysRoot, o.dryRun, log)
	if err != nil {
		log.Error("open ethtool socket", "err", err)
		return exitDegraded
	}
	defer func() { _ = et.Close() }()
	if o.once {
		return once(r, stdout, log)
	}
	return daemon(ctx, o, ln, p, r, nl, et, log)
}

// newReconciler wires the reconciler to the host: rings, driver names and driver counters through
// ethioctl (safchain/ethtool passes the kernel a stack address that goes stale when the goroutine's stack
// moves, see internal/ethioctl), links over netlink. The caller closes the ethtool reader.
func newReconciler(p *profile.Profile, procSysRoot, sysRoot string, dryRun bool,
	log *slog.Logger) (*reconcile.Reconciler, *ethioctl.Reader, links.Netlink, error) {
	// Rings, driver names and driver counters through ethioctl: safchain/ethtool passes the kernel a stack
	// address that goes stale when the goroutine's stack moves (see internal/ethioctl).
	et, err := ethioctl.Open()
	if err != nil {
		return nil, nil, links.Netlink{}, err
	}
	nl := links.NewNetlink(nil, nil)
	r := reconcile.New(reconcile.Config{
		Profile:     p,
		Links:       links.Discoverer{NL: nl, Drivers: et, Sysfs: links.Sysfs{Root: sysRoot}},
		Ethtool:     et,
		ProcSysRoot: procSysRoot,
		DryRun:      dryRun,
		Log:         log,
	})
	return r, et, nl, nil
}

// daemon keeps the profile applied until ctx ends: it serves metrics and health, reports to the Node,
// and re-applies on link events and every --resync.
func daemon(ctx context.Context, o options, ln net.Listener, p *profile.Profile, r *reconcile.Reconciler, nl links.Netlink,
	et *ethioctl.Reader, log *slog.Logger) int {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg)
	m.SetDriverStats(et.Stats)
	// Liveness fails only when several resyncs in a row did not finish: the loop is stuck, not busy.
	health := metrics.NewHealth(3 * o.resync)

	reporter, kube, err := kubeReporter(o, log)
	if err != nil {
		log.Error("kubernetes reporting disabled", "err", err)
	}
	handlers := map[string]http.Handler{}
	if o.fleet.on {
		h, stop, err := startFleetProbe(ctx, o, reg, kube, log)
		if err != nil {
			log.Error("probe disabled", "err", err)
		} else {
			handlers["/probe"] = h
			defer stop()
		}
	}
	if ln != nil {
		srv := serve(ln, reg, health, log, handlers)
		defer shutdown(srv)
	}
	if reporter != nil {
		go reporter.Run(ctx)
	}
	if o.snat.on {
		stop := startSNAT(ctx, o, p, reg, reporter, kube, log)
		defer stop()
	}

	// 1 MiB holds thousands of RTM_NEWLINK messages (a pod-churn burst) before the kernel drops them with
	// ENOBUFS and the watcher has to re-list; the kernel caps it at net.core.rmem_max.
	w := &links.Watcher{NL: nl, Log: log, ReceiveBuffer: 1 << 20}
	log.Info("starting", "profile", p.Name, "dry_run", o.dryRun, "resync", o.resync.String(), "debounce", o.debounce.String())
	opts := reconcile.Options{Resync: o.resync, Debounce: o.debounce, Hooks: publish(ctx, m, health, reporter, log)}
	if err := r.Run(ctx, w, opts); err != nil {
		log.Error("reconcile loop", "err", err)
		return exitDegraded
	}
	// No rollback: see agent/README.md ("Why settings stay after exit").
	log.Info("stopped; settings left in place")
	return exitApplied
}

// publish sends every report to the metrics, the health endpoints and the Node (reporter may be nil),
// and every event to the log and the Node.
func publish(ctx context.Context, m *metrics.Metrics, health *metrics.Health, reporter *nodestatus.Reporter,
	log *slog.Logger) reconcile.Hooks {
	ready := false
	return reconcile.Hooks{
		Observe: func(rep status.Report) {
			m.Observe(rep)
			health.Reconciled(rep.Time)
			if !ready {
				ready = true
				health.Ready()
				log.Info("first reconcile", "state", rep.State, "reason", rep.Reason)
			}
			if reporter != nil {
				reporter.Report(ctx, rep)
			}
		},
		Event: func(ev status.Event) {
			log.Info("event", "reason", ev.Reason, "message", ev.Message, "warning", ev.Warning)
			if reporter != nil {
				reporter.Event(ctx, ev)
			}
		},
		LinkEvent: m.LinkEvent,
	}
}

func once(r *reconcile.Reconciler, stdout io.Writer, log *slog.Logger) int {
	rep, _ := r.All()
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		log.Error("write report", "err", err)
		return exitDegraded
	}
	if rep.State == status.StateDegraded || len(rep.Errors) > 0 {
		return exitDegraded
	}
	return exitApplied
}

// kubeReporter returns nil when Kubernetes reporting is off or not possible (no cluster, no node name),
// and the configuration it reached the API server with (the pod watch of the SNAT attribution uses it too).
func kubeReporter(o options, log *slog.Logger) (*nodestatus.Reporter, *rest.Config, error) {
	cfg, err := kubeConfig(o)
	if cfg == nil || err != nil {
		return nil, nil, err
	}
	// The core/v1-only REST client, not client-go's typed one: that one links every API group (~12 MB).
	api, err := nodestatus.NewRESTAPI(cfg)
	if err != nil {
		return nil, nil, err
	}
	return nodestatus.NewReporterWithAPI(api, o.nodeName, clock.RealClock{}, log), cfg, nil
}

// kubeConfig is how to reach the API server; nil when Kubernetes reporting is off or there is no cluster.
func kubeConfig(o options) (*rest.Config, error) {
	if !o.kube {
		return nil, nil
	}
	var cfg *rest.Config
	var err error
	switch {
	case o.kubeconfig != "":
		cfg, err = loadKubeconfig(o.kubeconfig)
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		cfg, err = rest.InClusterConfig()
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if o.nodeName == "" {
		return nil, errors.New("no node name: set --node-name or $NODE_NAME (the DaemonSet passes spec.nodeName)")
	}
	cfg.UserAgent = "wirespeed-agent"
	return cfg, nil
}

// preflight checks what the daemon will need before anything is applied, as the profile is: a daemon that
// runs without the metrics, health probes or Node reports it was asked for looks healthy while nobody can see
// it. It returns the bound --listen socket (nil with --once or an empty --listen).
func preflight(o options) (net.Listener, error) {
	if o.once {
		return nil, nil
	}
	ln, err := listen(o.listen)
	if err != nil {
		return nil, err
	}
	if o.kube && o.kubeconfig != "" {
		if _, err := loadKubeconfig(o.kubeconfig); err != nil {
			closeListener(ln)
			return nil, fmt.Errorf("--kubeconfig %s: %w", o.kubeconfig, err)
		}
	}
	return ln, nil
}

// listen binds --listen before anything is applied, so a malformed or taken address is a usage error
// (exit 2), not a log line from a daemon that then runs unobserved. Empty disables the listener.
func listen(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("--listen %q: %w (want host:port or :port)", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w", addr, err)
	}
	return ln, nil
}

func closeListener(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
}

func serve(ln net.Listener, reg *prometheus.Registry, h *metrics.Health, log *slog.Logger, extra map[string]http.Handler) *http.Server {
	mux := http.NewServeMux()
	for path, handler := range extra {
		mux.Handle(path, handler)
	}
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", h.Healthz)
	mux.HandleFunc("/readyz", h.Readyz)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return srv
}

func shutdown(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}
