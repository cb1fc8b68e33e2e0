"""Jumbo MTU: the largest MTU a NIC and a network path both allow. Opt-in only: a wrong MTU blackholes
traffic that crosses a gateway, so nothing in wirespeed raises MTU unless a profile asks for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from wirespeed.errors import UserError
from wirespeed.sizing.errors import SizingError

# docs.aws.amazon.com/AWSEC2/latest/UserGuide/network_mtu.html: 1,500 through an internet gateway, VPN or
# inter-region peering; learn.microsoft.com/azure/virtual-network/how-to-virtual-machine-mtu: the same for
# Azure gateways, peering to other regions and the internet.
DEFAULT_MTU = 1_500
# docs.aws.amazon.com/AWSEC2/latest/UserGuide/ena-express.html: ENA Express (SRD) traffic carries at most 8,900.
ENA_EXPRESS_MTU = 8_900
Path = Literal["local", "gateway"]


class MtuFlagError(UserError, ValueError):
    """An option that does not apply to the driver given (``field``: the option's name)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class MtuPlan:
    driver: str
    path: Path
    mtu: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"driver": self.driver, "path": self.path, "mtu": self.mtu, "reason": self.reason}

    def explain(self) -> str:
        return f"MTU {self.mtu:,} for {self.driver}: {self.reason}"


def ena_express_drivers() -> tuple[str, ...]:
    """The drivers of the instance types the catalog marks ENA Express capable (EC2 DescribeInstanceTypes:
    EnaSrdSupported): the only ones --ena-express can apply to."""
    from wirespeed import catalog

    return tuple(
        sorted(
            {d for t in catalog.instance_types(cloud="aws") if t.ena_express for d in catalog.NIC_KINDS[t.nic].drivers}
        )
    )


def plan_mtu(driver: str, *, path: Path = "local", ena_express: bool = False) -> MtuPlan:
    """``path`` is "local" for traffic that stays in one VNet/VPC, "gateway" if any of it crosses one.

    The driver is checked whatever the path (a typo is refused, not answered with 1,500), and ``ena_express`` is
    refused for a driver no ENA Express instance type has: answering for that driver as if it were not set would
    hide that the flag was meant for another NIC."""
    from wirespeed import catalog  # the NIC facts live in the catalog; loaded on first use

    # The cloud VM drivers (catalog.NIC_KINDS), whose ``mtu_max`` in the catalog (nic_drivers.json, with its
    # source) is the largest MTU the cloud carries inside one VNet or VPC. Other drivers' mtu_max is a hardware
    # limit, not a path limit, so they are not offered here.
    azure_drivers, aws_drivers = catalog.cloud_drivers("azure"), catalog.cloud_drivers("aws")
    if driver not in azure_drivers and driver not in aws_drivers:
        known = sorted(catalog.cloud_drivers())
        guesses = catalog.driver_guesses(driver, known)
        hint = f" (did you mean {' or '.join(guesses)}?)" if guesses else ""
        raise SizingError("driver", driver, f"one of {', '.join(known)}{hint}")
    express = ena_express_drivers()
    if ena_express and driver not in express:
        where = " (an Azure NIC)" if driver in azure_drivers else ""
        raise MtuFlagError(
            "ena_express",
            f"ena_express: does not apply to driver {driver!r}{where}: ENA Express (SRD) is an AWS feature of the "
            f"{' and '.join(express)} driver; leave it out, or give driver {' or '.join(express)}",
        )
    if path == "gateway":
        return MtuPlan(
            driver, path, DEFAULT_MTU, f"traffic crosses a gateway, peering or the internet: {DEFAULT_MTU:,}"
        )
    if driver in azure_drivers:
        mtu = catalog.nic_driver(driver).mtu_max
        return MtuPlan(driver, path, mtu, "largest MTU Azure carries inside a VNet for this NIC")
    if ena_express:
        return MtuPlan(driver, path, ENA_EXPRESS_MTU, f"ENA Express (SRD) carries at most {ENA_EXPRESS_MTU:,}")
    return MtuPlan(driver, path, catalog.nic_driver(driver).mtu_max, "jumbo frames inside a VPC")
