"""The tuning-agent rules under their old home: each rule is its own module now, named by its rule ID (see
docs/architecture.md). This module only re-exports the names it used to hold, so ``from wirespeed.rules.agent import
...`` keeps working."""

from __future__ import annotations

from wirespeed.rules._agent import ALLOWED_CAPABILITIES, PRIVILEGES_DOC, PROC_SYS_NET, RENDER_HINT, SYS
from wirespeed.rules._node_pools import EKS_CLUSTER
from wirespeed.rules.tuning_agent_least_privilege import AGENT_LEAST_PRIVILEGE, check_least_privilege
from wirespeed.rules.tuning_agent_present import AGENT_PRESENT, check_agent_present

__all__ = [
    "AGENT_LEAST_PRIVILEGE",
    "AGENT_PRESENT",
    "ALLOWED_CAPABILITIES",
    "EKS_CLUSTER",
    "PRIVILEGES_DOC",
    "PROC_SYS_NET",
    "RENDER_HINT",
    "SYS",
    "check_agent_present",
    "check_least_privilege",
]
