"""The sysctls a profile may set: their ranges (AKS's where AKS accepts the same sysctl), the allow-list by kernel
name, and the known name a typo most likely meant."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from wirespeed.problems import SUGGEST_WITHIN_EDITS, edit_distance
from wirespeed.profile.fields import Range, WholeNumber, _Strict
from wirespeed.sizing.aks_sysctls import BY_KERNEL_NAME as AKS_SYSCTLS


def _aks_range(kernel_name: str) -> tuple[int, int]:
    row = AKS_SYSCTLS[kernel_name]
    return row.low, row.high


# Sysctl ranges. Where AKS's custom node configuration accepts the same sysctl, its range is used so one
# profile is valid on both clouds (learn.microsoft.com/azure/aks/custom-node-configuration, "Linux OS
# custom configuration"); the lower bound is the kernel default, below which the profile would de-tune.
NetdevMaxBacklog = Annotated[int, WholeNumber, Range(*_aks_range("net.core.netdev_max_backlog"))]
# Kernel default 300 (Documentation/admin-guide/sysctl/net.rst, netdev_budget); upper bound keeps one
# softirq round from starving user space for more than a few ms.
NetdevBudget = Annotated[int, WholeNumber, Range(300, 100_000)]
# Kernel default 2 jiffies = 2,000 us at HZ=1000, 8,000 us at HZ=250 (sysctl/net.rst, netdev_budget_usecs).
NetdevBudgetUsecs = Annotated[int, WholeNumber, Range(1_000, 100_000)]
SocketBufferMax = Annotated[int, WholeNumber, Range(*_aks_range("net.core.rmem_max"))]  # wmem_max: the same range
OptmemMax = Annotated[int, WholeNumber, Range(*_aks_range("net.core.optmem_max"))]
Somaxconn = Annotated[int, WholeNumber, Range(*_aks_range("net.core.somaxconn"))]
TcpMaxSynBacklog = Annotated[int, WholeNumber, Range(*_aks_range("net.ipv4.tcp_max_syn_backlog"))]
TcpFinTimeout = Annotated[int, WholeNumber, Range(*_aks_range("net.ipv4.tcp_fin_timeout"))]
# A kernel int with no documented bound: what the agent's writer (and the kernel's proc_dointvec) takes. The kernel
# still has the last word; a value it refuses is logged by the agent and the boot script, never half-applied.
KernelInt = Annotated[int, WholeNumber, Range(0, 2_147_483_647)]
# Documented as 0 (off), 1 (on), 2 (loopback only / always): tcp_tw_reuse, tcp_mtu_probing (ip-sysctl.rst).
ZeroToTwo = Annotated[int, WholeNumber, Range(0, 2)]
Boolean = Annotated[int, WholeNumber, Range(0, 1)]  # ip-sysctl.rst "BOOLEAN": 0 or 1
# The bounds a socket may set the same option to (include/net/tcp.h MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL,
# MAX_TCP_KEEPCNT): the sysctl is those options' default, so a default no socket could choose is refused.
KeepaliveSeconds = Annotated[int, WholeNumber, Range(1, 32_767)]
KeepaliveProbes = Annotated[int, WholeNumber, Range(1, 127)]


class Sysctls(_Strict):
    """Global (host network namespace) sysctls: the allow-list of what a profile may set, by kernel name.

    A name outside it is refused (a typo must not pass as a sysctl nobody sets). Every entry is an integer sysctl the
    agent can write (it mounts the host's /proc/sys/net; see the DaemonSet) and the EKS boot script can persist; names
    and meanings from the kernel's Documentation/admin-guide/sysctl/net.rst (net.core), Documentation/networking/
    ip-sysctl.rst (net.ipv4, net.ipv6) and Documentation/networking/nf_conntrack-sysctl.rst (net.netfilter). String
    and vector sysctls (tcp_rmem, ip_local_port_range) are not here: the agent writes single integers; AKS sets
    ip_local_port_range at node creation (wirespeed.sizing.aks_sysctls)."""

    # net.core: the receive path and socket buffers (sysctl/net.rst).
    netdev_max_backlog: NetdevMaxBacklog | None = Field(default=None, alias="net.core.netdev_max_backlog")
    netdev_budget: NetdevBudget | None = Field(default=None, alias="net.core.netdev_budget")
    netdev_budget_usecs: NetdevBudgetUsecs | None = Field(default=None, alias="net.core.netdev_budget_usecs")
    rmem_max: SocketBufferMax | None = Field(default=None, alias="net.core.rmem_max")
    wmem_max: SocketBufferMax | None = Field(default=None, alias="net.core.wmem_max")
    # A default buffer within the range a max may take: the kernel default (212,992) up to AKS's largest max.
    rmem_default: SocketBufferMax | None = Field(default=None, alias="net.core.rmem_default")
    wmem_default: SocketBufferMax | None = Field(default=None, alias="net.core.wmem_default")
    optmem_max: OptmemMax | None = Field(default=None, alias="net.core.optmem_max")
    somaxconn: Somaxconn | None = Field(default=None, alias="net.core.somaxconn")
    busy_poll: KernelInt | None = Field(default=None, alias="net.core.busy_poll")  # microseconds; 0 is off
    busy_read: KernelInt | None = Field(default=None, alias="net.core.busy_read")  # microseconds; 0 is off
    # net.ipv4: TCP and the neighbour table (ip-sysctl.rst).
    tcp_max_syn_backlog: TcpMaxSynBacklog | None = Field(default=None, alias="net.ipv4.tcp_max_syn_backlog")
    tcp_fin_timeout: TcpFinTimeout | None = Field(default=None, alias="net.ipv4.tcp_fin_timeout")
    tcp_tw_reuse: ZeroToTwo | None = Field(default=None, alias="net.ipv4.tcp_tw_reuse")
    tcp_max_tw_buckets: KernelInt | None = Field(default=None, alias="net.ipv4.tcp_max_tw_buckets")
    tcp_keepalive_time: KeepaliveSeconds | None = Field(default=None, alias="net.ipv4.tcp_keepalive_time")
    tcp_keepalive_intvl: KeepaliveSeconds | None = Field(default=None, alias="net.ipv4.tcp_keepalive_intvl")
    tcp_keepalive_probes: KeepaliveProbes | None = Field(default=None, alias="net.ipv4.tcp_keepalive_probes")
    tcp_slow_start_after_idle: Boolean | None = Field(default=None, alias="net.ipv4.tcp_slow_start_after_idle")
    tcp_mtu_probing: ZeroToTwo | None = Field(default=None, alias="net.ipv4.tcp_mtu_probing")
    ipv4_gc_thresh1: KernelInt | None = Field(default=None, alias="net.ipv4.neigh.default.gc_thresh1")
    ipv4_gc_thresh2: KernelInt | None = Field(default=None, alias="net.ipv4.neigh.default.gc_thresh2")
    ipv4_gc_thresh3: KernelInt | None = Field(default=None, alias="net.ipv4.neigh.default.gc_thresh3")
    # net.ipv6: the same neighbour-table thresholds (ip-sysctl.rst, "neigh/default/*" applies to both families).
    ipv6_gc_thresh1: KernelInt | None = Field(default=None, alias="net.ipv6.neigh.default.gc_thresh1")
    ipv6_gc_thresh2: KernelInt | None = Field(default=None, alias="net.ipv6.neigh.default.gc_thresh2")
    ipv6_gc_thresh3: KernelInt | None = Field(default=None, alias="net.ipv6.neigh.default.gc_thresh3")
    # net.netfilter: conntrack's size and timeouts in seconds (nf_conntrack-sysctl.rst). max and buckets are global:
    # only the host's network namespace may write them.
    nf_conntrack_max: KernelInt | None = Field(default=None, alias="net.netfilter.nf_conntrack_max")
    nf_conntrack_buckets: KernelInt | None = Field(default=None, alias="net.netfilter.nf_conntrack_buckets")
    nf_conntrack_tcp_timeout_established: KernelInt | None = Field(
        default=None, alias="net.netfilter.nf_conntrack_tcp_timeout_established"
    )
    nf_conntrack_tcp_timeout_time_wait: KernelInt | None = Field(
        default=None, alias="net.netfilter.nf_conntrack_tcp_timeout_time_wait"
    )
    nf_conntrack_udp_timeout: KernelInt | None = Field(default=None, alias="net.netfilter.nf_conntrack_udp_timeout")
    nf_conntrack_udp_timeout_stream: KernelInt | None = Field(
        default=None, alias="net.netfilter.nf_conntrack_udp_timeout_stream"
    )

    def as_dict(self) -> dict[str, int]:
        """Every set sysctl by its dotted name."""
        out = {k: v for k, v in self.model_dump(by_alias=True).items() if v is not None}
        return {name: int(value) for name, value in sorted(out.items())}


KNOWN_SYSCTLS: tuple[str, ...] = tuple(sorted(str(f.alias) for f in Sysctls.model_fields.values()))
"""Every sysctl a profile may set, by kernel name (the Sysctls model's allow-list, which the schema carries)."""


def nearest_sysctl(name: str) -> str | None:
    """The known sysctl ``name`` is most likely a typo of (fewest edits, then alphabetical), or None."""
    best = min(KNOWN_SYSCTLS, key=lambda known: (edit_distance(name, known), known))
    return best if edit_distance(name, best) <= SUGGEST_WITHIN_EDITS else None
