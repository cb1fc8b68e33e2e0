"""Whether a backlog or NIC ring holds a stall, and what to set when it does not: the one decision of "enough".

Every place that sizes or judges ``net.core.netdev_max_backlog`` or an RX/TX ring goes through :class:`Need`:
``wirespeed size backlog`` and ``wirespeed size rings`` recommend :attr:`Need.recommended`; the policy rules
(netdev-backlog-minimum, nic-ring-minimum, and so ``wirespeed check`` and the pack) pass a value exactly when
:meth:`Need.holds` says so; the built-in profiles are sized with it. The Terraform module ``modules/sizing``
computes the same recommendation in HCL and is held equal to this one by ``tests/vectors/sizing_backlog.json`` and
``sizing_rings.json``, which are generated from it; the agent's ``rings.Holds``/``rings.Recommended`` are checked
against the same vectors.

Three rules make the advice agree with itself:

- a value holds the stall when what the kernel or driver actually runs with it is at least the packets that arrive
  during the stall (a ring above the driver's max is held to the max, so a stall longer than the max can hold is
  held to the max);
- an unset value is the kernel's or the driver's default, and is judged as that default written out would be;
- the recommendation is the default when the default holds the stall, and otherwise the smallest value of the usual
  shape (a power of two for the backlog; what the driver keeps unchanged for a ring) that holds it: never below the
  default, and never smaller than a value that already fits (:meth:`Need.advice`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from wirespeed.sizing.packets import next_power_of_two

if TYPE_CHECKING:
    from wirespeed.catalog import NicDriver

Queue = Literal["backlog", "rx", "tx"]


@dataclass(frozen=True)
class Need:
    """What one queue must hold, and how the node turns a written value into the one it runs.

    ``packets`` arrive during the stall; ``floor`` is a policy's minimum on top (0: none); ``default`` is what the
    node runs when nothing sets the value; ``maximum`` the largest value accepted (AKS's or the kernel's for the
    backlog, the driver's for a ring). ``driver`` is set for a ring of a driver the catalog knows: a written ring
    is rounded and clamped the way that driver does (ENA rounds 1,500 down to 1,024). A ring of a driver the
    catalog does not know has ``driver`` None and is taken as written.
    """

    queue: Queue
    packets: int
    default: int
    maximum: int
    floor: int = 0
    driver: NicDriver | None = None

    @property
    def wanted(self) -> int:
        """What the stall and the policy floor ask for, before the maximum."""
        return max(self.packets, self.floor)

    @property
    def required(self) -> int:
        """The smallest value the node may run with: ``wanted``, held to the maximum."""
        return min(self.wanted, self.maximum)

    @property
    def capped(self) -> bool:
        """Whether even the maximum is below what the stall (or floor) asks for."""
        return self.wanted > self.maximum

    def effective(self, value: int | None) -> int:
        """What the node runs when ``value`` is written (None: nothing written, so the default)."""
        if value is None:
            return self.default
        if self.driver is not None and self.queue != "backlog":
            return self.driver.round_ring(value, self.queue)
        return value

    def holds(self, value: int | None) -> bool:
        """Whether ``value`` (None: unset, the default) is enough: the one decision every gate makes."""
        return self.effective(value) >= self.required

    @property
    def recommended(self) -> int:
        """What to set: the default if it holds, else the smallest value of the usual shape that holds."""
        if self.holds(None):
            return self.default
        if self.driver is not None and self.queue != "backlog":
            return self.driver.ring_holding(self.wanted, self.queue)
        # The backlog (and a ring of a driver the catalog does not know): the next power of two of the stall's
        # packets, for headroom, or the policy floor exactly when that is more.
        return min(max(next_power_of_two(self.packets), self.floor), self.maximum)

    def advice(self, value: int | None) -> int:
        """What a node that runs ``value`` should run: ``value`` itself when it holds (never talked down), else the
        recommendation."""
        if value is not None and self.holds(value):
            return value
        return self.recommended
