"""The --plot figure marks a plan that does not fit (drawn with the real matplotlib, Agg backend)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from wirespeed.plot import DOES_NOT_FIT_GID, draw_load_balancer
from wirespeed.sizing import azure_lb


def _marked(plan: azure_lb.LoadBalancerPlan) -> tuple[list[str], str]:
    fig = draw_load_balancer(plan)
    try:
        total_ax = fig.axes[0]
        gids = [artist.get_gid() for artist in total_ax.get_children() if artist.get_gid()]
        return gids, total_ax.get_title()
    finally:
        plt.close(fig)


def test_a_plan_that_does_not_fit_is_shaded_and_titled_so():
    # issue 28's case: 100 nodes + 2 surge at 4,000 ports on 5 IPs needs 408,000 of 320,000 ports.
    plan = azure_lb.plan_load_balancer([azure_lb.Pool(100, 2)], ports=4000, outbound_ips=5)
    assert not plan.feasible
    gids, title = _marked(plan)
    assert DOES_NOT_FIT_GID in gids
    assert title == "DOES NOT FIT: 408,000 ports required, 320,000 available"


@pytest.mark.parametrize("ips", [None, 7])
def test_a_plan_that_fits_carries_no_marker(ips):
    plan = azure_lb.plan_load_balancer([azure_lb.Pool(100, 2)], ports=4000, outbound_ips=ips)
    assert plan.feasible
    gids, title = _marked(plan)
    assert DOES_NOT_FIT_GID not in gids
    assert title == "AKS outbound SNAT: capacity rule"
