"""The labels and metadata every object wirespeed renders carries, shared by the tuning manifests
(:mod:`wirespeed.manifests.node_tuning`) and the monitoring objects (:mod:`wirespeed.manifests.monitoring`)."""

from __future__ import annotations

from typing import Any

from wirespeed import __version__
from wirespeed.names import AGENT_NAME, PROFILE_LABEL


def labels(component: str, profile: str | None = None) -> dict[str, str]:
    """The recommended app.kubernetes.io labels, and the profile label on per-profile objects."""
    result = {
        "app.kubernetes.io/name": AGENT_NAME,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": "wirespeed",
        "app.kubernetes.io/version": __version__,
    }
    if profile is not None:
        result[PROFILE_LABEL] = profile
    return result


def metadata(name: str, component: str, namespace: str | None = None, profile: str | None = None) -> dict[str, Any]:
    """An object's ``metadata``: its name, its namespace when it has one, and :func:`labels`."""
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = labels(component, profile)
    return meta
