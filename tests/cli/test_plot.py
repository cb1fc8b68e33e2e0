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


@pytest.mark.parametrize(
    ("pools", "ports", "ips"),
    [([(100, 2)], 4000, 5), ([(100, 2)], 4000, None), ([(10, 1)], 1024, None), ([(60, 6), (5, 1)], 3600, None)],
)
def test_no_label_overlaps_a_line_or_another_label(pools, ports, ips):
    """Bounding boxes from matplotlib's renderer: every text (annotations, legends, titles) against every other and
    against every line's path in display coordinates."""
    plan = azure_lb.plan_load_balancer([azure_lb.Pool(m, s) for m, s in pools], ports=ports, outbound_ips=ips)
    fig = draw_load_balancer(plan)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        boxes = []
        for ax in fig.axes:
            texts = [t for t in ax.texts if t.get_text()]
            boxes += [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
            legend = ax.get_legend()
            if legend is not None:
                boxes.append((f"legend of {ax.get_ylabel()}", legend.get_window_extent(renderer)))
            for title in (ax.title,):
                if title.get_text():
                    boxes.append((title.get_text(), title.get_window_extent(renderer)))
        lines = [
            (str(line.get_label()), line.get_path().transformed(line.get_transform()))
            for ax in fig.axes
            for line in ax.get_lines()
        ]
        for i, (name, box) in enumerate(boxes):
            for other, other_box in boxes[i + 1 :]:
                assert not box.overlaps(other_box), f"{name!r} overlaps {other!r}"
            for label, path in lines:
                assert not path.intersects_bbox(box, filled=False), f"{name!r} overlaps the line {label!r}"
    finally:
        plt.close(fig)
