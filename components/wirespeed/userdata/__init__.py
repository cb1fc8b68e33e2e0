"""EC2 user data for tuned EKS nodes, as plain data (no Pulumi).

- :func:`render_script`: a tuning profile as the POSIX sh script that applies it at boot (sysctls, NIC rings
  clamped to the device max, MTU), never failing the boot.
- :func:`render_bottlerocket_settings`: Bottlerocket's TOML settings: sysctls, and the agent as a bootstrap container
  for rings and MTU.
- :func:`render_user_data`: the MIME multipart AL2023 nodes read: a nodeadm ``NodeConfig`` part
  (``application/node.eks.aws``) and the script as a ``text/x-shellscript`` part.
"""

from wirespeed.userdata.node_user_data import (
    BOOTSTRAP_CONTAINER,
    BOOTSTRAP_ESSENTIAL,
    BOOTSTRAP_MODE,
    BOTTLEROCKET_MARKER,
    BOUNDARY,
    NODECONFIG_API_VERSION,
    NODECONFIG_CONTENT_TYPE,
    SCRIPT_CONTENT_TYPE,
    ClusterDetails,
    bootstrap_profile,
    bootstrap_user_data,
    needs_bootstrap_container,
    node_config,
    render_al2023_user_data,
    render_bottlerocket_settings,
)
from wirespeed.userdata.script import (
    LOG_PREFIX,
    SCRIPT_MARKER,
    SYSCTL_CONF,
    ScriptError,
    render_script,
    script_problems,
)

__all__ = [
    "BOOTSTRAP_CONTAINER",
    "BOOTSTRAP_ESSENTIAL",
    "BOOTSTRAP_MODE",
    "BOTTLEROCKET_MARKER",
    "BOUNDARY",
    "LOG_PREFIX",
    "NODECONFIG_API_VERSION",
    "NODECONFIG_CONTENT_TYPE",
    "SCRIPT_CONTENT_TYPE",
    "SCRIPT_MARKER",
    "SYSCTL_CONF",
    "ClusterDetails",
    "ScriptError",
    "bootstrap_profile",
    "bootstrap_user_data",
    "needs_bootstrap_container",
    "node_config",
    "render_al2023_user_data",
    "render_bottlerocket_settings",
    "render_script",
    "script_problems",
]
