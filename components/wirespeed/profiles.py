"""Built-in tuning profiles, derived from the sizing engine rather than typed in.

``throughput`` reproduces the field report (seed 000: a VF on a 100 Gb/s host NIC, RX ring 8,192 and
netdev_max_backlog 32,768); ``balanced`` sizes for 25 Gb/s, a quarter of the ring memory, and matches the AKS
team's Dsv3 advice of RX 2,048 (seed 002). The committed JSON under data/profiles/ is what the DaemonSet ships;
a test proves it equals what this module derives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from wirespeed import catalog
from wirespeed.errors import UserError
from wirespeed.profile import Profile, RingSize, Sysctls, validate_profile
from wirespeed.sizing import backlog, line_rate, rings
from wirespeed.sizing.packets import DEFAULT_PACKET_BYTES

# The drivers of the NICs Azure and AWS nodes present (catalog.NIC_KINDS); lab drivers (e1000e, igbvf, virtio_net)
# are for tests only.
CLOUD_DRIVERS = tuple(sorted(catalog.cloud_drivers()))


@dataclass(frozen=True)
class Assumptions:
    line_rate_gbps: float
    summary: str
    packet_bytes: int = DEFAULT_PACKET_BYTES
    ring_stall_ms: float = rings.DEFAULT_STALL_MS
    backlog_stall_ms: float = backlog.DEFAULT_STALL_MS

    def describe(self) -> str:
        return (
            f"{self.summary} Sized for {self.line_rate_gbps:g} Gb/s of {self.packet_bytes:,}-byte packets: rings "
            f"hold {self.ring_stall_ms:g} ms, the backlog {self.backlog_stall_ms:g} ms."
        )


ASSUMPTIONS: dict[str, Assumptions] = {
    "throughput": Assumptions(
        line_rate.BUILTIN_LINE_RATES["throughput"],
        "For nodes whose VF sits on a 100 Gb/s host NIC (Azure accelerated networking, AWS 100 Gb/s types): "
        "maximum burst absorption.",
    ),
    "balanced": Assumptions(
        line_rate.BUILTIN_LINE_RATES["balanced"],
        "For general-purpose nodes up to 25 Gb/s: a quarter of the ring memory of `throughput`.",
    ),
}


class UnknownProfile(UserError, LookupError):  # noqa: N818  (named like the catalog's Unknown... errors)
    """No built-in profile of that name."""

    field = "profile"


def _assumptions(name: str) -> Assumptions:
    try:
        return ASSUMPTIONS[name]
    except KeyError:
        raise UnknownProfile(f"profile: {name!r} is not a built-in profile: {', '.join(sorted(ASSUMPTIONS))}") from None


def build_profile(name: str) -> Profile:
    """Derive a built-in profile from the sizing engine."""
    assumed = _assumptions(name)
    # The same derivation the policy gates hold a pool to at its own line rate (wirespeed.sizing.line_rate): a
    # built-in profile sits exactly at the minimum for the line rate it assumes.
    ring_sizes = {}
    for driver in CLOUD_DRIVERS:
        sized = line_rate.rings_for(
            driver, assumed.line_rate_gbps, stall_ms=assumed.ring_stall_ms, packet_bytes=assumed.packet_bytes
        )
        assert sized is not None, f"{driver}: a cloud driver without NIC rings"
        ring_sizes[driver] = RingSize(rx=sized[0], tx=sized[1])
    queue = line_rate.backlog_for(
        assumed.line_rate_gbps, stall_ms=assumed.backlog_stall_ms, packet_bytes=assumed.packet_bytes
    )
    return Profile(
        name=name,
        description=assumed.describe(),
        rings=ring_sizes,
        sysctls=Sysctls.model_validate({"net.core.netdev_max_backlog": queue}),
    )


def builtin_profile(name: str) -> Profile:
    """A built-in profile as committed (and shipped to the agent)."""
    _assumptions(name)  # an unknown name raises the LookupError naming the choices
    text = resources.files("wirespeed").joinpath(f"data/profiles/{name}.json").read_text()
    return validate_profile(json.loads(text))


def render_builtin(name: str) -> str:
    """The exact text of data/profiles/<name>.json."""
    return json.dumps(build_profile(name).to_json_dict(), indent=2) + "\n"


def write_builtins() -> None:
    """Regenerate data/profiles/*.json (run after changing sizing or the catalog's NIC facts)."""
    folder = resources.files("wirespeed").joinpath("data/profiles")
    for name in ASSUMPTIONS:
        with resources.as_file(folder.joinpath(f"{name}.json")) as path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_builtin(name))


if __name__ == "__main__":
    write_builtins()
