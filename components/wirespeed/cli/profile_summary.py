"""The readable form of a tuning profile that `wirespeed profile show` prints (`--json` prints the document)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import RenderableType

    from wirespeed.profile import Profile


def _listed(values: list[str], empty: str) -> str:
    return ", ".join(values) if values else empty


def _rings(profile: Profile) -> Table:
    table = Table("driver", "RX", "TX", title="NIC rings", title_justify="left")
    table.columns[0].no_wrap = True
    for driver, size in sorted(profile.rings.items()):
        table.add_row(driver, *(f"{v:,}" if v is not None else "unchanged" for v in (size.rx, size.tx)))
    return table


def _sysctls(profile: Profile) -> Table:
    table = Table("sysctl", "value", title="Global sysctls", title_justify="left")
    table.columns[0].no_wrap = True
    for key, value in profile.sysctls.as_dict().items():
        table.add_row(key, f"{value:,}")
    return table


def _rest(profile: Profile) -> Text:
    mtu = profile.mtu
    lines = [
        "MTU: "
        + (
            "left alone"
            if mtu is None
            else f"{mtu.value:,} on {_listed(list(mtu.drivers), 'every selected interface')}"
        ),
    ]
    out = profile.outbound
    if out is None:
        lines.append("Outbound: no SNATPortPressure condition")
    else:
        ports = f", {out.allocated_ports_per_node:,} ports per node" if out.allocated_ports_per_node else ""
        ips = f", {out.public_ips} public IP(s)" if out.public_ips else ""
        lines.append(f"Outbound: {out.kind}{ports}{ips}; SNATPortPressure at {out.pressure_percent}%")
    lines.append("The document the agent reads: `wirespeed profile show --json " + profile.name + "`")
    return Text("\n".join(lines))


def summary(profile: Profile) -> list[RenderableType]:
    """The profile in sections: name and assumptions, interfaces, rings, sysctls, MTU and outbound."""
    selector = profile.interfaces
    interfaces = Text(
        f"Interfaces: roles {_listed(list(selector.roles), 'none')}; drivers {_listed(list(selector.drivers), 'any')}; "
        f"names {_listed(list(selector.include), 'any')}, except {_listed(list(selector.exclude), 'none')}"
    )
    return [
        Text(f"Profile {profile.name} (schema version {profile.schema_version})", style="bold"),
        Text(profile.description or "(no description)"),
        Text(),
        interfaces,
        _rings(profile) if profile.rings else Text("NIC rings: left alone"),
        _sysctls(profile) if profile.sysctls.as_dict() else Text("Global sysctls: none"),
        _rest(profile),
    ]
