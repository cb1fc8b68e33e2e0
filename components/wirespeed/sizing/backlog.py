"""net.core.netdev_max_backlog sizing: the per-CPU queue between NAPI and the protocol stack."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from wirespeed.sizing.aks_sysctls import BY_KERNEL_NAME
from wirespeed.sizing.exact import Number
from wirespeed.sizing.packets import DEFAULT_PACKET_BYTES, packets_during
from wirespeed.sizing.queues import Need

# AKS's netCoreNetdevMaxBacklog range (1,000 is also the kernel default), from the one AKS sysctl table.
BACKLOG_MIN = BY_KERNEL_NAME["net.core.netdev_max_backlog"].low
BACKLOG_MAX = BY_KERNEL_NAME["net.core.netdev_max_backlog"].high
# Nodes outside AKS (EKS user data, the tuning agent) write the sysctl directly: net/core/sysctl_net_core.c
# registers netdev_max_backlog with proc_dointvec, so the kernel takes any C int; 1,000 is its default
# (net/core/hotdata.c: .max_backlog = 1000).
KERNEL_DEFAULT = 1_000
KERNEL_INT_MAX = 2**31 - 1
# Whose limits a plan obeys: AKS's range (azure), the kernel's (aws), or AKS's for a value valid on both (None).
BacklogCloud = Literal["azure", "aws"] | None
# The backlog drains in the NET_RX softirq; under load softirqs are pushed to ksoftirqd, which can wait a
# scheduler tick: 4 ms at CONFIG_HZ=250 (Debian/Ubuntu 22.04 kernels). At 100 Gb/s that is the 32,768 the
# Elastic field report set ([elastic-aks], docs/references.md).
DEFAULT_STALL_MS = 4.0
# include/linux/skbuff.h SKB_TRUESIZE: an skb costs its data plus struct sk_buff and skb_shared_info
# (~576 bytes together on x86-64 6.x).
SKB_OVERHEAD_BYTES = 576


@dataclass(frozen=True)
class BacklogPlan:
    line_rate_gbps: float
    stall_ms: float
    packet_bytes: int
    packets_in_stall: int
    netdev_max_backlog: int
    capped: bool
    memory_bytes_per_cpu: int
    cloud: BacklogCloud = None

    @property
    def maximum(self) -> int:
        """The largest value this plan's cloud accepts."""
        return KERNEL_INT_MAX if self.cloud == "aws" else BACKLOG_MAX

    def to_json(self) -> dict[str, Any]:
        capped = "capped_at_kernel_max" if self.cloud == "aws" else "capped_at_aks_max"
        return {
            "netdev_max_backlog": self.netdev_max_backlog,
            "packets_in_stall": self.packets_in_stall,
            capped: self.capped,
            "memory_bytes_per_cpu": self.memory_bytes_per_cpu,
        }

    def _range(self) -> str:
        if self.cloud == "aws":
            return f"{KERNEL_DEFAULT:,}..{KERNEL_INT_MAX:,}, the kernel's int range, which EKS does not narrow"
        if self.cloud == "azure":
            return f"AKS's {BACKLOG_MIN:,}..{BACKLOG_MAX:,}"
        return f"{BACKLOG_MIN:,}..{BACKLOG_MAX:,}, the range AKS accepts; on AWS the kernel's int range applies"

    def _how_chosen(self) -> str:
        if self.capped:
            whose = "the kernel's int maximum" if self.cloud == "aws" else "AKS's maximum"
            return (
                f"capped at {whose} {self.maximum:,}, below the {self.packets_in_stall:,} the stall needs: "
                f"it holds only {self.stall_ms * self.maximum / self.packets_in_stall:.2g} ms at this rate"
            )
        # queues.Need recommends the kernel default exactly when the default holds the stall.
        if self.netdev_max_backlog == KERNEL_DEFAULT:
            if self.cloud == "aws":
                return "the stall fits in the kernel default"
            return f"the stall fits in the kernel default, AKS's minimum {BACKLOG_MIN:,}"
        return f"{self.packets_in_stall:,} rounded up to a power of two, within {self._range()}"

    def explain(self) -> str:
        lines = [
            f"At {self.line_rate_gbps:g} Gb/s with {self.packet_bytes:,}-byte packets, {self.packets_in_stall:,} "
            f"packets arrive while the backlog waits {self.stall_ms:,g} ms to be drained.",
            f"net.core.netdev_max_backlog = {self.netdev_max_backlog:,} (kernel default {KERNEL_DEFAULT:,}; "
            f"{self._how_chosen()}).",
            f"Worst case a full backlog pins {self.memory_bytes_per_cpu / 2**20:,.1f} MiB per CPU; it is only "
            "used during bursts. A larger backlog absorbs microbursts; it cannot rescue sustained overload.",
        ]
        return "\n".join(lines)


def backlog_need(packets: int, *, floor: int = 0, cloud: BacklogCloud = None) -> Need:
    """What a backlog must hold for ``packets`` arriving in the stall (and a policy ``floor``): unset, a node runs
    the kernel default; the maximum is AKS's unless ``cloud`` is ``"aws"``."""
    maximum = KERNEL_INT_MAX if cloud == "aws" else BACKLOG_MAX
    return Need("backlog", packets, KERNEL_DEFAULT, maximum, floor=floor)


def plan_backlog(
    line_rate_gbps: Number,
    *,
    stall_ms: Number = DEFAULT_STALL_MS,
    packet_bytes: int = DEFAULT_PACKET_BYTES,
    cloud: BacklogCloud = None,
) -> BacklogPlan:
    """The backlog that holds ``stall_ms`` of traffic at ``line_rate_gbps``: within AKS's range unless ``cloud``
    is ``"aws"`` (EKS nodes write the sysctl themselves, so only the kernel's int range applies)."""
    need = backlog_need(packets_during(line_rate_gbps, packet_bytes, stall_ms), cloud=cloud)  # validates the inputs
    packet_bytes = int(packet_bytes)
    value = need.recommended
    return BacklogPlan(
        line_rate_gbps=float(line_rate_gbps),
        stall_ms=float(stall_ms),
        packet_bytes=packet_bytes,
        packets_in_stall=need.packets,
        netdev_max_backlog=value,
        capped=need.capped,
        memory_bytes_per_cpu=value * (packet_bytes + SKB_OVERHEAD_BYTES),
        cloud=cloud,
    )
