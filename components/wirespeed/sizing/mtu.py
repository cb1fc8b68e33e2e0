"""Jumbo MTU: the largest MTU a NIC and a network path both allow. Opt-in only: a wrong MTU blackholes
traffic that crosses a gateway, so nothing in wirespeed raises MTU unless a profile asks for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from wirespeed.sizing.errors import SizingError

# learn.microsoft.com/azure/virtual-network/how-to-virtual-machine-mtu: inside one VNet MANA takes up to 9,000
# and Mellanox (mlx4/mlx5) up to 3,900; traffic through gateways, peering to other regions or the internet is 1,500.
# docs.aws.amazon.com/AWSEC2/latest/UserGuide/network_mtu.html: 9,001 inside a VPC; 1,500 through an internet
# gateway, VPN or inter-region peering; ENA Express traffic 8,900 (ena-express.html).
DEFAULT_MTU = 1_500
AZURE_MTU = {"mana": 9_000, "mlx5_core": 3_900, "mlx4_en": 3_900}
AWS_MTU = 9_001
ENA_EXPRESS_MTU = 8_900

Path = Literal["local", "gateway"]


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


def plan_mtu(driver: str, *, path: Path = "local", ena_express: bool = False) -> MtuPlan:
    """``path`` is "local" for traffic that stays in one VNet/VPC, "gateway" if any of it crosses one."""
    if path == "gateway":
        return MtuPlan(driver, path, DEFAULT_MTU, "traffic crosses a gateway, peering or the internet: 1,500")
    if driver in AZURE_MTU:
        return MtuPlan(driver, path, AZURE_MTU[driver], "largest MTU Azure carries inside a VNet for this NIC")
    if driver == "ena":
        if ena_express:
            return MtuPlan(driver, path, ENA_EXPRESS_MTU, "ENA Express (SRD) carries at most 8,900")
        return MtuPlan(driver, path, AWS_MTU, "jumbo frames inside a VPC")
    known = ", ".join(sorted([*AZURE_MTU, "ena"]))
    raise SizingError("driver", driver, f"one of {known}")
