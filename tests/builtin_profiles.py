"""The built-in profiles' numbers, for tests of what the library renders from them.

Read from the profiles the library ships (data/profiles/*.json, which wirespeed.profiles derives from its
ASSUMPTIONS through the sizing engine), so changing a profile's assumptions needs `make regen` and no test edit.
The field reports the profiles are meant to reproduce are pinned once, in tests/profiles/test_profiles_builtin.py.

Not here: a NIC driver's ring maximum (mlx5_core's 8,192 is a catalog fact: wirespeed.catalog), a number a test
chose as its own input (a hand-written fixture's backlog), and numbers a message or a field report quotes.
"""

from __future__ import annotations

from wirespeed.profile import Profile
from wirespeed.profiles import builtin_profile


def backlog(profile: Profile) -> int:
    value = profile.sysctls.netdev_max_backlog
    assert value is not None, f"{profile.name} sets no net.core.netdev_max_backlog"
    return value


def rx(profile: Profile) -> dict[str, int]:
    """RX ring entries by driver."""
    return {driver: ring.rx for driver, ring in profile.rings.items() if ring.rx is not None}


def tx(profile: Profile) -> dict[str, int]:
    """TX ring entries by driver."""
    return {driver: ring.tx for driver, ring in profile.rings.items() if ring.tx is not None}


THROUGHPUT = builtin_profile("throughput")
BALANCED = builtin_profile("balanced")

THROUGHPUT_BACKLOG = backlog(THROUGHPUT)
BALANCED_BACKLOG = backlog(BALANCED)
THROUGHPUT_RX, THROUGHPUT_TX = rx(THROUGHPUT), tx(THROUGHPUT)
BALANCED_RX, BALANCED_TX = rx(BALANCED), tx(BALANCED)
