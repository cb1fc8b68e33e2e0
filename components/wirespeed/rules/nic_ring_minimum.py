"""nic-ring-minimum: tuning profiles ask for RX/TX rings at or above the minimum for their nodes' line rate and within
each driver's maximum."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wirespeed.references import AKS_NET_TUNING, ELASTIC_AKS
from wirespeed.rules import _k8s
from wirespeed.rules._azure import _on_azure
from wirespeed.rules._line_rate import LINE_RATE_READ, Minimum, _floor, _line_rate_schema, config_map_rate
from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings
from wirespeed.sizing import line_rate
from wirespeed.sizing.rings import ENA_EXPRESS_RX_RING
from wirespeed.values import elements, get, keys, text, whole

if TYPE_CHECKING:
    from wirespeed.catalog import Direction


DIRECTIONS: tuple[Direction, ...] = ("rx", "tx")  # wirespeed.catalog.Direction, without loading the catalog
ELASTIC_RINGS = f"{ELASTIC_AKS.short} (RX ring 1,024 -> 8,192 on Azure's Mellanox VF); {AKS_NET_TUNING.short}"
RING_EVIDENCE = (
    f"Elastic's field report ('{ELASTIC_AKS.title}') lost packets at 1,024 on Azure's Mellanox VF and none at 8,192"
)
RING_WHY = {
    "rx": f"a small RX ring overflows during microbursts from the host NIC; {RING_EVIDENCE}",
    "tx": "a TX ring that cannot hold a stall's worth of packets stops the queue during bursts, and the qdisc "
    "backs up behind it",
}

# Optional floors on top of the line-rate minimum. Their default, a one-entry ring, adds nothing to it; a team that
# wants every node above some size whatever its line rate sets them.
RING_FLOORS = {"rx": "minimumRxRing", "tx": "minimumTxRing"}
DEFAULT_RING_FLOOR = 1


# --- nic-ring-minimum -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RingVerdict:
    """One ring of one driver: the size the profile should ask for (None: remove the driver's rings) and why."""

    target: int | None
    problem: str
    minimum: Minimum | None = None


def _ring_minimum(driver: str, direction: Direction, rate: line_rate.LineRate, settings: Settings) -> Minimum | None:
    """None for a driver without NIC rings."""
    floor = _floor(settings, RING_FLOORS[direction])
    need = line_rate.ring_need(driver, direction, rate.gbps, floor=floor or 0)
    if need is None:
        return None
    return Minimum(need, need.packets, floor, rate, RING_FLOORS[direction], direction)


def _ring_verdict(
    driver: str, direction: Direction, value: int | None, rate: line_rate.LineRate, settings: Settings
) -> RingVerdict | None:
    """What is wrong with ``rings.<driver>.<direction>`` (None: unset, so the driver's default), or None when it is
    fine."""
    from wirespeed import catalog

    try:
        nic: catalog.NicDriver | None = catalog.nic_driver(driver)
    except catalog.UnknownDriver:
        nic = None
    if nic is not None and (nic.rx is None or nic.tx is None):
        return RingVerdict(
            None, f"{driver} has no NIC rings to size, so the agent never applies it ({nic.description})"
        )
    minimum = _ring_minimum(driver, direction, rate, settings)
    assert minimum is not None  # only ring-less drivers have none, handled above
    if not minimum.holds(value):
        capped = f", held to {driver}'s max {minimum.need.maximum:,}" if nic is not None and minimum.need.capped else ""
        return RingVerdict(minimum.recommended, f"below {minimum.reason()}{capped}", minimum)
    if nic is not None and value is not None and value > minimum.need.maximum:
        return RingVerdict(minimum.need.maximum, f"above {driver}'s maximum {minimum.need.maximum:,}")
    return None


def _judged_drivers(document: Mapping[str, Any], on_azure: bool) -> tuple[str, ...]:
    """The cloud NIC drivers whose rings the profile leaves at their defaults count too: the agent tunes nothing
    there, so they run the driver's default. Those of the ConfigMap's cloud: Azure's under an AKS component, else the
    one cloud whose drivers the profile's own rings name, else both clouds'; narrowed to ``interfaces.drivers`` when
    the profile names some."""
    from wirespeed import catalog
    from wirespeed.catalog._model import CLOUDS

    written = keys(document.get("rings"))
    clouds = {c for c in CLOUDS if any(d in catalog.cloud_drivers(c) for d in written)}
    cloud: catalog.Cloud | None = "azure" if on_azure else (next(iter(clouds)) if len(clouds) == 1 else None)
    drivers = catalog.cloud_drivers(cloud)
    named = [d for d in (text(v) for v in elements(get(document, "interfaces", "drivers"), "drivers")) if d]
    return tuple(d for d in drivers if d in named) if named else drivers


def _rings(document: Mapping[str, Any], on_azure: bool) -> Iterator[tuple[str, Direction, int | None]]:
    """Every ring the profile sets, and every ring of a cloud driver it leaves unset (None: the driver's default).
    A ring whose value is not a whole number is profile-valid's to report."""
    from wirespeed import catalog

    rings = document.get("rings")
    rings = rings if isinstance(rings, Mapping) else {}
    known = catalog.nic_drivers()
    written = keys(rings)
    for driver in [*written, *(d for d in _judged_drivers(document, on_azure) if d not in written)]:
        for direction in DIRECTIONS:
            raw = get(rings, driver, direction)
            if raw is None:
                # An unknown driver's default is not known, and a ring-less one has none: nothing to judge.
                if driver in known and known[driver].has_rings:
                    yield driver, direction, None
                continue
            value = whole(raw)
            if value is not None:
                yield driver, direction, value


def _ring_evidence(driver: str) -> str:
    """The field evidence for a larger RX ring from the driver's own cloud: an ENA ring is not Azure's VF."""
    from wirespeed import catalog

    if driver not in catalog.cloud_drivers("aws"):
        return RING_EVIDENCE
    rx = catalog.nic_driver(driver).rx
    default = f"; ENA starts at {rx.default:,}" if rx is not None else ""
    return (
        f"AWS recommends an RX ring of {ENA_EXPRESS_RX_RING:,} on ENA interfaces that use ENA Express "
        f"(docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html, Tune performance{default})"
    )


def _ring_why(driver: str, direction: Direction) -> str:
    """Why a ring must be larger, with the evidence from the driver's own cloud for RX."""
    return (
        RING_WHY[direction].replace(RING_EVIDENCE, _ring_evidence(driver)) if direction == "rx" else RING_WHY[direction]
    )


def _ring_message(where: str, driver: str, direction: Direction, value: int | None, verdict: RingVerdict) -> str:
    field = f"rings.{driver}.{direction}"
    if value is None:
        from wirespeed import catalog

        assert verdict.minimum is not None  # only a ring below its minimum is reported unset
        default = catalog.nic_driver(driver).limits(direction).default
        return (
            f"{where}: {field} is unset (the driver default {default:,}), {verdict.problem}: "
            f"{_ring_why(driver, direction)}. Set {field} to {verdict.minimum.set_to()}: "
            f"{verdict.minimum.profile_advice()} (`wirespeed size rings --driver {driver} --line-rate-gbps "
            f"{verdict.minimum.rate.gbps:g}` sizes it)."
        )
    if verdict.target is None:
        return (
            f"{where}: {field} is {value:,}, but {verdict.problem}. Remove rings.{driver} and size the VF's driver "
            "(mlx5_core, mana) instead."
        )
    if verdict.target < value:
        return (
            f"{where}: {field} is {value:,}, {verdict.problem}: the agent clamps it to {verdict.target:,} on every "
            f"node and the profile no longer says what nodes run. Set {field} to {verdict.target:,}."
        )
    assert verdict.minimum is not None
    return (
        f"{where}: {field} is {value:,}, {verdict.problem}: {_ring_why(driver, direction)}. Set {field} to "
        f"{verdict.minimum.set_to()}: {verdict.minimum.profile_advice()} (`wirespeed size rings --driver {driver} "
        f"--line-rate-gbps {verdict.minimum.rate.gbps:g}` sizes it)."
    )


def _applies(driver: str, on_azure: bool) -> bool:
    """A ring setting for a driver of AWS's NICs (ENA) never applies on an AKS node: no Azure VM presents one, so
    the agent never sizes it there and a finding citing AWS's guidance would be about nothing. (No driver is both
    clouds', so an AWS driver is never an Azure one.)"""
    from wirespeed import catalog

    return not on_azure or driver not in catalog.cloud_drivers("aws")


def _ring_verdicts(
    resource: Resource, settings: Settings
) -> Iterator[tuple[str, str, Direction, int | None, RingVerdict]]:
    profile = _k8s.profile_in(resource)
    if profile is None:
        return
    rate = config_map_rate(resource, settings)
    on_azure = _on_azure(resource)
    for driver, direction, value in _rings(profile.document, on_azure):
        if not _applies(driver, on_azure):
            continue
        verdict = _ring_verdict(driver, direction, value, rate, settings)
        if verdict is not None:
            yield profile.where, driver, direction, value, verdict


def check_rings(resource: Resource, settings: Settings) -> Iterator[Finding]:
    for where, driver, direction, value, verdict in _ring_verdicts(resource, settings):
        yield Finding(resource, _ring_message(where, driver, direction, value, verdict))


def remediate_rings(resource: Resource, settings: Settings) -> Mapping[str, Any] | None:
    """Raise rings to the minimum and lower rings above a driver's max to it (what the node would do)."""
    profile = _k8s.profile_in(resource)
    if profile is None:
        return None
    changes: dict[str, dict[str, int]] = {}
    for _, driver, direction, _, verdict in _ring_verdicts(resource, settings):
        if verdict.target is not None:
            changes.setdefault(driver, {})[direction] = verdict.target
    if not changes:
        return None
    document = dict(profile.document)
    written = document.get("rings")
    rings = dict(written) if isinstance(written, Mapping) else {}
    for driver, targets in changes.items():
        current = rings.get(driver)
        rings[driver] = {**(current if isinstance(current, Mapping) else {}), **targets}
    document["rings"] = rings
    return _k8s.with_profile(resource, document)


RING_MINIMUM = Rule(
    id="nic-ring-minimum",
    order=50,
    description="Tuning profiles ask for RX/TX rings at or above the minimum for their nodes' line rate and within "
    "each driver's maximum.",
    severity="medium",
    default_enforcement="mandatory",
    remediation="Set rings.<driver>.rx/tx in the tuning profile between the minimum and the driver's maximum "
    "(remediated automatically under the remediate level; running agents pick it up when their pods restart).",
    source=f"{ELASTIC_RINGS}; docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html (ENA: RX 8,192); "
    "components/wirespeed/data/nic_drivers.json (driver maxima)",
    scope="resource",
    types=(_k8s.CONFIG_MAP,),
    reads=(Reads(_k8s.CONFIG_MAP, (_k8s.PROFILE_READ, LINE_RATE_READ)),),
    config_schema={
        **{
            setting: {
                "type": "integer",
                "minimum": 1,
                "default": DEFAULT_RING_FLOOR,
                "description": f"A floor on top of the line-rate minimum for {direction.upper()} rings (a driver "
                "whose max is lower is held to its max). The default adds nothing to the line-rate minimum.",
            }
            for direction, setting in RING_FLOORS.items()
        },
        **_line_rate_schema(),
    },
    check=check_rings,
    remediate=remediate_rings,
)

RULE = RING_MINIMUM
