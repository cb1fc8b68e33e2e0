// Package reconcile is the agent's loop: desired state from the profile, observed state from netlink,
// ethtool and /proc/sys, apply the difference, and produce one status.Report every surface shares.
package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
	"github.com/wirespeed-io/wirespeed/agent/internal/mtu"
	"github.com/wirespeed-io/wirespeed/agent/internal/profile"
	"github.com/wirespeed-io/wirespeed/agent/internal/rings"
	"github.com/wirespeed-io/wirespeed/agent/internal/status"
	"github.com/wirespeed-io/wirespeed/agent/internal/sysctl"
)

// Config is what a Reconciler needs. The profile must already be validated (profile.Load): nothing is
// applied from a profile that failed validation, so nothing is ever half-applied.
type Config struct {
	Profile     *profile.Profile
	Links       links.Discoverer
	Ethtool     rings.Ethtool
	ProcSysRoot string
	DryRun      bool
	Log         *slog.Logger
	Now         func() time.Time // nil: time.Now
}

// Reconciler applies a profile to the node and remembers the last outcome per link and sysctl.
type Reconciler struct {
	cfg     Config
	applier *rings.Applier

	mu         sync.Mutex
	ifaces     map[string]status.Interface // by link name
	known      map[int]bool                // ifindexes reconciled before: a new one is a link that appeared
	sysctls    map[string]status.Value
	sysctlErrs map[string]string
	listErr    string
}

// New returns a Reconciler for cfg.
func New(cfg Config) *Reconciler {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ProcSysRoot == "" {
		cfg.ProcSysRoot = "/proc/sys"
	}
	return &Reconciler{
		cfg:        cfg,
		applier:    &rings.Applier{ET: cfg.Ethtool, Log: cfg.Log},
		ifaces:     map[string]status.Interface{},
		known:      map[int]bool{},
		sysctls:    map[string]status.Value{},
		sysctlErrs: map[string]string{},
	}
}

// Outcome says what one reconcile wrote.
type Outcome struct {
	Written int      // values written (in dry-run: 0)
	Tuned   []string // links reconciled for the first time that needed writing: they appeared untuned
}

func (o *Outcome) add(name string, written int, isNew bool) {
	o.Written += written
	if isNew && written > 0 {
		o.Tuned = append(o.Tuned, name)
	}
}

// All reconciles the sysctls and every link.
func (r *Reconciler) All() (status.Report, Outcome) {
	var out Outcome
	out.Written = r.reconcileSysctls()
	all, err := r.cfg.Links.List()
	r.mu.Lock()
	if err != nil {
		r.listErr = err.Error()
		r.mu.Unlock()
		r.cfg.Log.Error("list links", "err", err)
		return r.Report(), out
	}
	r.listErr = ""
	names := make(map[string]bool, len(all))
	indexes := make(map[int]bool, len(all))
	for _, l := range all {
		names[l.Name], indexes[l.Index] = true, true
	}
	for name := range r.ifaces {
		if !names[name] {
			delete(r.ifaces, name)
		}
	}
	for index := range r.known {
		if !indexes[index] {
			delete(r.known, index)
		}
	}
	present := make(map[rings.Link]bool, len(all))
	for _, l := range all {
		present[rings.Link{Name: l.Name, Index: l.Index}] = true
	}
	r.applier.Retain(func(name string, index int) bool { return present[rings.Link{Name: name, Index: index}] })
	r.mu.Unlock()
	for _, l := range all {
		written, isNew := r.reconcileLink(l)
		out.add(l.Name, written, isNew)
	}
	return r.Report(), out
}

// Link reconciles one link by name. A link that no longer exists is forgotten.
func (r *Reconciler) Link(name string) (status.Report, Outcome) {
	var out Outcome
	l, err := r.cfg.Links.Get(name)
	if err != nil {
		var gone netlink.LinkNotFoundError
		var errno syscall.Errno
		if errors.As(err, &gone) || errors.As(err, &errno) && errno == syscall.ENODEV {
			r.Forget(name)
			return r.Report(), out
		}
		r.mu.Lock()
		iface := r.ifaces[name]
		iface.Name, iface.Error = name, err.Error()
		r.ifaces[name] = iface
		r.mu.Unlock()
		return r.Report(), out
	}
	written, isNew := r.reconcileLink(l)
	out.add(l.Name, written, isNew)
	return r.Report(), out
}

// Forget drops a removed link from the report, and what the ring applier remembers about it.
func (r *Reconciler) Forget(name string) {
	r.mu.Lock()
	if i, ok := r.ifaces[name]; ok {
		delete(r.known, i.Index)
		r.applier.Forget(name, i.Index)
	}
	delete(r.ifaces, name)
	r.mu.Unlock()
}

func (r *Reconciler) reconcileSysctls() int {
	p := r.cfg.Profile
	written := 0
	values := map[string]status.Value{}
	errs := map[string]string{}
	for _, name := range p.SysctlNames() {
		want := p.Sysctls[name]
		before, changed, err := sysctl.Ensure(r.cfg.ProcSysRoot, name, want, r.cfg.DryRun)
		if err != nil {
			errs[name] = err.Error()
			r.cfg.Log.Error("sysctl", "setting", name, "to", want, "err", err)
			values[name] = status.Value{Desired: want, Current: before}
			continue
		}
		current := before
		if changed {
			if r.cfg.DryRun {
				r.cfg.Log.Info("drift", "setting", name, "from", before, "to", want)
			} else {
				current = want
				written++
				r.cfg.Log.Info("applied", "link", "", "driver", "", "setting", name, "from", before, "to", want)
			}
		}
		values[name] = status.Value{Desired: want, Current: current}
	}
	r.mu.Lock()
	r.sysctls, r.sysctlErrs = values, errs
	r.mu.Unlock()
	return written
}

// reconcileLink returns the number of values written and whether the link was new to the Reconciler.
func (r *Reconciler) reconcileLink(l links.Link) (int, bool) {
	p := r.cfg.Profile
	selected, reason := links.Select(p.Interfaces, l)
	iface := status.Interface{
		Name: l.Name, Index: l.Index, Driver: l.Driver, Role: l.Role, Selected: selected, Reason: reason,
	}
	written := 0
	var errs []string
	if selected {
		if want, ok := p.Rings[l.Driver]; ok {
			rx, tx, changes, err := r.applier.Apply(rings.Link{Name: l.Name, Index: l.Index, Driver: l.Driver}, want, r.cfg.DryRun)
			iface.RX, iface.TX = rx, tx
			if err != nil {
				errs = append(errs, err.Error())
			}
			errs = append(errs, refusals(rx, tx)...)
			for _, c := range changes {
				r.logChange(l, c.Setting, int64(c.From), int64(c.To))
			}
			if err == nil && !r.cfg.DryRun {
				written += len(changes)
			}
		}
		deviceMax := 0
		if p.MTU != nil && r.cfg.Links.NL.LinkMaxMTU != nil {
			if m, err := r.cfg.Links.NL.LinkMaxMTU(l.Index); err == nil {
				deviceMax = m
			}
		}
		if want, ok := mtu.Desired(p, l.Driver, deviceMax); ok && l.Raw != nil {
			before, changed, err := mtu.Ensure(r.cfg.Links.NL.LinkSetMTU, l.Raw, want, r.cfg.DryRun)
			v := &status.Value{Desired: int64(want), Current: int64(before)}
			if err != nil {
				errs = append(errs, err.Error())
			} else if changed {
				r.logChange(l, "mtu", int64(before), int64(want))
				if !r.cfg.DryRun {
					v.Current = int64(want)
					written++
				}
			}
			iface.MTU = v
		}
	}
	iface.Error = strings.Join(errs, "; ")
	if iface.Error != "" {
		r.cfg.Log.Error("apply", "link", l.Name, "driver", l.Driver, "err", iface.Error)
	}
	r.mu.Lock()
	for name, other := range r.ifaces {
		if other.Index == l.Index && name != l.Name {
			delete(r.ifaces, name) // renamed (udev names a new VF after it appears)
			r.applier.Forget(name, other.Index)
		}
	}
	if prev, ok := r.ifaces[l.Name]; ok && prev.Index != l.Index {
		r.applier.Forget(l.Name, prev.Index) // re-added under the same name: a new instance
	}
	r.ifaces[l.Name] = iface
	isNew := !r.known[l.Index]
	r.known[l.Index] = true
	r.mu.Unlock()
	return written, isNew
}

// refusals names the ring directions a device would not keep at the profile's size: a reason the
// profile is not applied, not a success.
func refusals(rx, tx *status.Ring) []string {
	var out []string
	for _, d := range []struct {
		name string
		ring *status.Ring
	}{{"rx", rx}, {"tx", tx}} {
		if d.ring != nil && d.ring.Refused {
			out = append(out, fmt.Sprintf("%s ring: the device kept %d when %d was written (device max %d); "+
				"not written again while it keeps that size", d.name, d.ring.Current, d.ring.Desired, d.ring.Max))
		}
	}
	return out
}

func (r *Reconciler) logChange(l links.Link, setting string, from, to int64) {
	msg := "applied"
	if r.cfg.DryRun {
		msg = "drift"
	}
	r.cfg.Log.Info(msg, "link", l.Name, "driver", l.Driver, "setting", setting, "from", from, "to", to)
}

// Report is the current state. Unselected virtual links (pod veths, bridges) are left out: a node can
// have hundreds, and the report is also the Node annotation.
func (r *Reconciler) Report() status.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := status.Report{
		Profile:    r.cfg.Profile.Name,
		Interfaces: []status.Interface{},
		Sysctls:    make(map[string]status.Value, len(r.sysctls)),
		Time:       r.cfg.Now().UTC(),
	}
	for k, v := range r.sysctls {
		rep.Sysctls[k] = v
	}
	if r.listErr != "" {
		rep.Errors = append(rep.Errors, "list links: "+r.listErr)
	}
	for _, i := range r.ifaces {
		if !i.Selected && i.Role == profile.RoleVirtual && i.Error == "" {
			continue
		}
		rep.Interfaces = append(rep.Interfaces, i)
		if i.Error != "" {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %s", i.Name, i.Error))
		}
	}
	sort.Slice(rep.Interfaces, func(a, b int) bool { return rep.Interfaces[a].Index < rep.Interfaces[b].Index })
	for _, name := range slices.Sorted(maps.Keys(r.sysctlErrs)) {
		rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %s", name, r.sysctlErrs[name]))
	}
	sort.Strings(rep.Errors)
	switch {
	case r.cfg.DryRun:
		rep.State = status.StateDryRun
		rep.Reason = "dry run: nothing written"
		if rep.Drifted() {
			rep.Reason = "dry run: drift found, nothing written"
		}
		if len(rep.Errors) > 0 {
			rep.Reason = fmt.Sprintf("dry run: %d problem(s): %s", len(rep.Errors), rep.Errors[0])
		}
	case len(rep.Errors) > 0:
		rep.State = status.StateDegraded
		rep.Reason = fmt.Sprintf("%d problem(s): %s", len(rep.Errors), rep.Errors[0])
	default:
		rep.State = status.StateApplied
		rep.Reason = "all settings applied"
	}
	return rep
}
