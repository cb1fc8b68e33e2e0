"""Reading wirespeed's Kubernetes objects from engine properties: profile ConfigMaps and the tuning DaemonSet.

The shapes are those ``wirespeed.manifests`` renders (``wirespeed render node-tuning``, ``NodeTuning``): a
ConfigMap whose ``data["profile.json"]`` is the profile document, and a DaemonSet labelled
``app.kubernetes.io/name: wirespeed-agent``. The names both sides share come from :mod:`wirespeed.names`, which
imports nothing (``wirespeed.manifests`` loads pydantic, which a stack without Kubernetes objects should not pay for).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from wirespeed.names import AGENT_NAME, PROFILE_KEY
from wirespeed.rules._model import Resource, is_type, quoted
from wirespeed.values import elements, get, plain, text

CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
NODE_TUNING = "wirespeed:index:NodeTuning"  # wirespeed.kubernetes.NodeTuning's type token
NAME_LABEL = "app.kubernetes.io/name"
# What the readers below read (Rule.reads): a profile ConfigMap's document, and how a DaemonSet is known as the agent.
PROFILE_READ = "data" + quoted(PROFILE_KEY)
TUNING_DAEMON_SET_READS = (
    "metadata.labels" + quoted(NAME_LABEL),
    "spec.template.spec.initContainers[].image",
    "spec.template.spec.containers[].image",
)


@dataclass(frozen=True)
class ProfileDoc:
    """A tuning profile found in a ConfigMap: its name, the parsed document, and where it sits."""

    name: str
    document: Mapping[str, Any]
    key: str

    @property
    def where(self) -> str:
        return f"profile {self.name!r} (data[{self.key!r}])"


def profile_in(resource: Resource) -> ProfileDoc | None:
    """The profile a ConfigMap carries, or None for any other ConfigMap (or one whose JSON does not parse:
    `wirespeed profile validate` and the agent report that, not the network rules)."""
    if not is_type(resource, CONFIG_MAP):
        return None
    raw = text(get(resource.props, "data", PROFILE_KEY))
    document = _parse(raw) if raw is not None else None
    if document is None:
        return None
    return ProfileDoc(document["name"], document, PROFILE_KEY)


@functools.lru_cache(maxsize=64)
def _parse(raw: str) -> Mapping[str, Any] | None:
    """A profile document, parsed once however many rules read it. Read-only: the remediations build new
    mappings rather than edit it."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("name"), str):
        return None
    return MappingProxyType(document)


def with_profile(resource: Resource, document: Mapping[str, Any]) -> dict[str, Any]:
    """The ConfigMap's props with ``data[profile.json]`` replaced by ``document``, in the manifests' JSON form."""
    props: dict[str, Any] = plain(resource.props)
    props["data"] = {**props.get("data", {}), PROFILE_KEY: json.dumps(document, indent=2) + "\n"}
    return props


def is_tuning_daemon_set(resource: Resource) -> bool:
    """A DaemonSet running the wirespeed agent: by its name label, or an agent image in its pod template."""
    if not is_type(resource, DAEMON_SET):
        return False
    props = resource.props
    if text(get(props, "metadata", "labels", NAME_LABEL)) == AGENT_NAME:
        return True
    return any(AGENT_NAME in (text(get(c, "image")) or "") for c, _ in containers(props))


def containers(props: Mapping[str, Any]) -> Iterator[tuple[Any, str]]:
    """Every container of the pod template with the field path it sits at."""
    spec = get(props, "spec", "template", "spec")
    for field in ("initContainers", "containers"):
        for index, container in enumerate(elements(get(spec, field), field)):
            yield container, f"spec.template.spec.{field}[{index}]"


def container_name(container: Any, where: str) -> str:
    name = text(get(container, "name"))
    return f"container {name!r}" if name else where
