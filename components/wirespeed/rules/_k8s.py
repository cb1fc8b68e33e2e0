"""Reading wirespeed's Kubernetes objects from engine properties: profile ConfigMaps and the tuning DaemonSet.

The shapes are those ``wirespeed.manifests`` renders (``wirespeed render node-tuning``, ``NodeTuning``): a
ConfigMap whose ``data["profile.json"]`` is the profile document, and a DaemonSet labelled
``app.kubernetes.io/name: wirespeed-agent``. Its constants are imported on first use only: ``wirespeed.manifests``
loads pydantic, which a stack without Kubernetes objects should not pay for.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from wirespeed.names import PROFILE_KEY
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


def _manifest_constants() -> tuple[str, str]:
    # From wirespeed.names, which the manifests also use: importing wirespeed.manifests would load pydantic.
    from wirespeed.names import AGENT_NAME, PROFILE_KEY

    return AGENT_NAME, PROFILE_KEY


@dataclass(frozen=True)
class ProfileDoc:
    """A tuning profile found in a ConfigMap: its name, the parsed document, and where it sits."""

    name: str
    document: Mapping[str, Any]
    key: str

    @property
    def where(self) -> str:
        return f"profile {self.name!r} (data[{self.key!r}])"


def profile_key() -> str:
    """The ConfigMap data key that holds a tuning profile."""
    return _manifest_constants()[1]


def profile_in(resource: Resource) -> ProfileDoc | None:
    """The profile a ConfigMap carries, or None for any other ConfigMap (or one whose JSON does not parse:
    `wirespeed profile validate` and the agent report that, not the network rules)."""
    if not is_type(resource, CONFIG_MAP):
        return None
    _, profile_key = _manifest_constants()
    raw = text(get(resource.props, "data", profile_key))
    document = _parse(raw) if raw is not None else None
    if document is None:
        return None
    return ProfileDoc(document["name"], document, profile_key)


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
    _, profile_key = _manifest_constants()
    props: dict[str, Any] = plain(resource.props)
    props["data"] = {**props.get("data", {}), profile_key: json.dumps(document, indent=2) + "\n"}
    return props


def is_tuning_daemon_set(resource: Resource) -> bool:
    """A DaemonSet running the wirespeed agent: by its name label, or an agent image in its pod template."""
    if not is_type(resource, DAEMON_SET):
        return False
    agent_name, _ = _manifest_constants()
    props = resource.props
    if text(get(props, "metadata", "labels", NAME_LABEL)) == agent_name:
        return True
    return any(agent_name in (text(get(c, "image")) or "") for c, _ in containers(props))


def containers(props: Mapping[str, Any]) -> Iterator[tuple[Any, str]]:
    """Every container of the pod template with the field path it sits at."""
    spec = get(props, "spec", "template", "spec")
    for field in ("initContainers", "containers"):
        for index, container in enumerate(elements(get(spec, field), field)):
            yield container, f"spec.template.spec.{field}[{index}]"


def container_name(container: Any, where: str) -> str:
    name = text(get(container, "name"))
    return f"container {name!r}" if name else where
