"""A tuning profile the agent would refuse: the agent exits 2 on it (agent/README.md, exit codes) and applies
nothing, so every node keeps driver and kernel defaults while the stack looks tuned. The other profile rules read
only the fields they understand, so without this one a profile that is not JSON, has a backlog of "1000" or
NaN, or is just a name would pass them all."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from wirespeed.names import PROFILE_KEY
from wirespeed.rules import _k8s
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings, is_type
from wirespeed.values import get


@functools.lru_cache(maxsize=64)
def profile_problems(raw: str) -> tuple[tuple[str, str], ...]:
    """Every problem the profile model (which refuses exactly what the Go agent refuses: tests/vectors/profiles.json)
    finds in ``raw``, as ``(JSON pointer, message)``; empty when the agent would apply it."""
    from wirespeed.profile import ProfileError, load_profile

    try:
        load_profile(raw)
    except ProfileError as exc:
        return tuple(exc.problems)
    return ()


def check_profile_valid(resource: Resource, settings: Settings) -> Iterator[Finding]:
    if not is_type(resource, _k8s.CONFIG_MAP):
        return
    raw = get(resource.props, "data", PROFILE_KEY)
    if raw is None:
        return  # not a profile ConfigMap
    where = f"data[{PROFILE_KEY!r}]"
    if not isinstance(raw, str):
        yield Finding(resource, f"{where} is not text: a ConfigMap's data values are strings; put the profile's JSON.")
        return
    problems = profile_problems(raw)
    if not problems:
        return
    listed = "; ".join(f"{at}: {message}" for at, message in problems)
    yield Finding(
        resource,
        f"{where} is a profile the tuning agent refuses ({listed}): the agent exits without applying anything, so "
        "every node it runs on keeps driver ring sizes and kernel defaults. Fix the profile (`wirespeed profile "
        "validate FILE` reports the same problems) or render it with `wirespeed render node-tuning --profile`.",
    )


PROFILE_VALID = Rule(
    id="tuning-profile-valid",
    order=120,
    description="Tuning profiles in ConfigMaps are profiles the agent accepts.",
    severity="high",
    default_enforcement="mandatory",
    remediation="Make data['profile.json'] a profile document the agent accepts (`wirespeed profile validate`); "
    "the schema is components/wirespeed/data/profile.schema.json.",
    source="agent/README.md (exit 2 on an invalid profile); tests/vectors/profiles.json (what Go and Python refuse)",
    scope="resource",
    types=(_k8s.CONFIG_MAP,),
    config_schema={},
    reads=(Reads(_k8s.CONFIG_MAP, (_k8s.PROFILE_READ,)),),
    check=check_profile_valid,
)

RULE = PROFILE_VALID
