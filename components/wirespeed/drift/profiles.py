"""The expected profiles, read from the cluster's tuning ConfigMaps (wirespeed.manifests renders them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wirespeed.drift.judge import ExpectedProfile
from wirespeed.manifests.node_tuning import AGENT_NAME, PROFILE_KEY, PROFILE_LABEL
from wirespeed.profile import ProfileError, load_profile

# The labels every profile ConfigMap carries (wirespeed.manifests.node_tuning.config_map): the list selector.
CONFIG_MAP_SELECTOR = f"app.kubernetes.io/name={AGENT_NAME},app.kubernetes.io/component=profile"


def expected_profile(label: str, text: object) -> ExpectedProfile:
    """The profile a ConfigMap labelled ``wirespeed.io/profile=<label>`` holds, or why it is unusable."""
    if not isinstance(text, str):
        return ExpectedProfile(label, problem=f"the ConfigMap has no {PROFILE_KEY} key")
    try:
        profile = load_profile(text)
    except ProfileError as exc:
        first = exc.problems[0] if exc.problems else ("", str(exc))
        return ExpectedProfile(label, problem=f"{first[0] or '/'}: {first[1]}")
    if profile.name != label:
        return ExpectedProfile(label, problem=f"the ConfigMap's profile is named {profile.name!r}")
    sysctls = {name: int(value) for name, value in profile.sysctls.as_dict().items()}
    if profile.outbound is None:
        return ExpectedProfile(label, sysctls=sysctls)
    outbound = profile.outbound
    return ExpectedProfile(
        label, sysctls=sysctls, snat_capacity=outbound.capacity(), snat_threshold=outbound.pressure_percent
    )


def profiles_from_config_maps(items: Iterable[Mapping[str, Any]]) -> dict[str, ExpectedProfile]:
    """ConfigMaps (as the API returns them) -> expected profile per label value. Two ConfigMaps claiming one
    profile (two installs in two namespaces) must agree, or nodes with that label cannot be judged."""
    found: dict[str, ExpectedProfile] = {}
    for item in items:
        meta = _object(item.get("metadata"))
        label = _object(meta.get("labels")).get(PROFILE_LABEL)
        if not label or not isinstance(label, str):
            continue
        expected = expected_profile(label, _object(item.get("data")).get(PROFILE_KEY))
        previous = found.get(label)
        if previous is not None and previous != expected:
            where = f"{meta.get('namespace')}/{meta.get('name')}"
            expected = ExpectedProfile(label, problem=f"ConfigMaps disagree on this profile (one of them: {where})")
        found[label] = expected
    return found


def _object(value: object) -> Mapping[str, Any]:
    """A JSON object as the API defines it, or empty for anything else a broken server sent."""
    return value if isinstance(value, dict) else {}
