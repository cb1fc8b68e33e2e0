"""What the two tuning-agent rules share: the agent's documented privileges and how to render its DaemonSet."""

from __future__ import annotations

PRIVILEGES_DOC = "agent/README.md (Privileges); docs/node-tuning.md (Tuning DaemonSet: why each privilege)"
# What the agent needs (agent/README.md, "Privileges"): the ethtool ioctl and netlink need CAP_NET_ADMIN; global
# net.* sysctls need /proc/sys/net writable; VF detection reads /sys.
ALLOWED_CAPABILITIES = frozenset({"NET_ADMIN"})
PROC_SYS_NET = "/proc/sys/net"
SYS = "/sys"
RENDER_HINT = "as `wirespeed render node-tuning` renders it"
