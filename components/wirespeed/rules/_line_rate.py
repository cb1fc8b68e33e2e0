"""The line rate a tuning rule holds a resource to (declared by an annotation or a tag, read from a size in the
catalog, or the assumed default of policy setting defaultLineRateGbps) and the minimum it gives a setting: shared by
netdev-backlog-minimum and nic-ring-minimum."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wirespeed.names import LINE_RATE_ANNOTATION
from wirespeed.rules._model import Resource, Settings
from wirespeed.sizing import line_rate, queues
from wirespeed.sizing.packets import LINE_RATE_GBPS_RANGE
from wirespeed.values import get, text

# Where the line rate comes from: a ConfigMap's annotations (LINE_RATE_ANNOTATION among them), a pool's size; the
# pool's labels name its profile in messages.
LINE_RATE_READ = "metadata.annotations"
POOL_LINE_RATE_READS = ("vmSize", "nodeLabels")

# The setting both rules share (netdev-backlog-minimum, nic-ring-minimum): the line rate assumed where the resource does
# not say it. Each rule has its own floors.
LINE_RATE_SETTING = "defaultLineRateGbps"


def _line_rate_schema() -> dict[str, Mapping[str, Any]]:
    low, high = LINE_RATE_GBPS_RANGE
    return {
        LINE_RATE_SETTING: {
            "type": "number",
            "minimum": float(low),
            "maximum": high,
            "default": line_rate.DEFAULT_LINE_RATE_GBPS,
            "description": "Line rate (Gb/s) assumed where the resource does not say it (a tuning ConfigMap, "
            f"or an AKSNodeClass or EC2NodeClass, without the {LINE_RATE_ANNOTATION} annotation, the class's NodePools "
            "pinning no size the catalog knows; a launch template without an instanceType); every verdict built on "
            "it says so.",
        }
    }


# --- the line-rate minimum ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Minimum:
    """What a setting must reach on one resource: the queue's :class:`~wirespeed.sizing.queues.Need` (the line-rate
    derivation and the policy floor), with where the line rate came from for messages."""

    need: queues.Need
    derived: int  # what the line rate alone needs: the stall's packets
    floor: int | None
    rate: line_rate.LineRate
    setting: str
    queue: str  # "backlog", "rx" or "tx"

    @property
    def value(self) -> int:
        """The smallest value that passes."""
        return self.need.required

    @property
    def recommended(self) -> int:
        """What to set (``wirespeed size``'s answer, or the floor): at least ``value``."""
        return self.need.recommended

    def holds(self, value: int | None) -> bool:
        return self.need.holds(value)

    def reason(self) -> str:
        """``the minimum N for <line rate>, where <derivation>``, or the floor and what the line rate alone needs."""
        if self.floor is not None and self.floor > self.derived:
            # Not in parentheses: the line rate's own description carries some ("(catalog)").
            return (
                f"the minimum {self.need.wanted:,} that policy setting {self.setting} sets, where "
                f"{self.rate.describe()} alone needs {self.derived:,}"
            )
        return f"the minimum {self.need.wanted:,} for {self.rate.describe()}, where {line_rate.derivation(self.queue)}"

    def set_to(self) -> str:
        """``N`` or ``N (any value from M holds it)``: the recommendation, and the least that passes when lower."""
        if self.recommended == self.value:
            return f"{self.recommended:,}"
        return f"{self.recommended:,} (any value from {self.value:,} passes)"

    def profile_advice(self) -> str:
        """Which built-in profile is sized for this line rate, for the fix."""
        if self.floor is not None and self.floor > self.derived:
            return f"policy setting {self.setting} asks for it whatever the line rate"
        builtin = line_rate.builtin_for(self.rate.gbps)
        if builtin is None:
            return f"no built-in profile is sized for {self.rate.gbps:g} Gb/s: use a custom profile"
        sized = line_rate.BUILTIN_LINE_RATES[builtin]
        return f"the built-in profile {builtin!r} is sized for {sized:g} Gb/s"


def _floor(settings: Settings, name: str) -> int | None:
    value = settings.get(name)
    return None if value is None else int(value)


def _assumed(settings: Settings, why: str) -> line_rate.LineRate:
    return line_rate.assumed(float(settings[LINE_RATE_SETTING]), f"{why}; policy setting {LINE_RATE_SETTING}")


def _size_rate(size: str | None, settings: Settings, field: str) -> line_rate.LineRate:
    if size is None:
        return _assumed(settings, f"{field} is unset")
    # Issue 25: the assumed rate is said to be an assumption, and where the unknown size itself is reported.
    missing = f"{field} {size} is not in wirespeed's catalog, which network-optimised-sku reports"
    return line_rate.of_size(size) or _assumed(settings, missing)


def config_map_rate(resource: Resource, settings: Settings) -> line_rate.LineRate:
    """The line rate a tuning ConfigMap declares (LINE_RATE_ANNOTATION), else the assumed default."""
    raw = get(resource.props, "metadata", "annotations", LINE_RATE_ANNOTATION)
    missing = f"a ConfigMap alone does not say which pools run it, and it has no {LINE_RATE_ANNOTATION} annotation"
    return _declared_rate(raw, f"its annotation {LINE_RATE_ANNOTATION}", "", missing, settings)


def _declared_rate(raw: object, where: str, why_there: str, missing: str, settings: Settings) -> line_rate.LineRate:
    """The line rate ``raw`` (the value at ``where``: an annotation or a tag) declares, else the assumed default
    with why: ``missing`` when there is none, else that it is no line rate."""
    value = _parse_rate(raw)
    low, high = LINE_RATE_GBPS_RANGE
    if value is not None and low <= value <= high:
        return line_rate.declared(value, f"{where}{why_there}")
    if raw is None:
        return _assumed(settings, missing)
    return _assumed(settings, f"{where} {text(raw)!r} is not a line rate in Gb/s ({low}..{high})")


def _parse_rate(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return None
    try:
        value = float(raw.strip() if isinstance(raw, str) else raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
