"""The one table of which path each setting takes (wirespeed.tuning_paths): complete, and what the README, the docs
page and `wirespeed plan` show. Regenerate the README block and docs/tuning-paths.md: python -m wirespeed.tuning_paths
"""

from __future__ import annotations

import itertools

from conftest import ROOT
from wirespeed import tuning_paths
from wirespeed.tuning_paths import PATHS, PLATFORMS, SETTINGS


def test_every_platform_has_every_setting_once():
    pairs = [(p.platform, p.setting) for p in PATHS]
    assert sorted(pairs) == sorted(itertools.product(PLATFORMS, SETTINGS))


def test_the_readme_and_the_docs_page_show_the_table():
    readme = (ROOT / "README.md").read_text()
    assert tuning_paths.readme_with_table(readme) == readme, "stale: python -m wirespeed.tuning_paths"
    docs = (ROOT / "docs" / "tuning-paths.md").read_text()
    assert docs == tuning_paths.docs_page(), "stale: python -m wirespeed.tuning_paths"


def test_aks_rings_and_mtu_are_the_agents_and_cite_the_aks_issue():
    for platform in ("aks-node-pool", "aks-nap"):
        rows = {p.setting: p for p in tuning_paths.paths_for((platform,))}
        assert rows["rings"].applied_by == "agent"
        assert rows["mtu"].applied_by == "agent"
        assert "Azure/AKS/issues/4959" in rows["mtu"].why
    assert "Azure/AKS/issues/4959" in tuning_paths.WHY_AGENT


def test_bottlerocket_rings_and_mtu_go_through_the_bootstrap_container():
    rows = {p.setting: p for p in tuning_paths.paths_for(("eks-bottlerocket",))}
    assert "settings.bootstrap-containers.wirespeed-tuning" in rows["rings"].mechanism
    assert "settings.bootstrap-containers.wirespeed-tuning" in rows["mtu"].mechanism
    assert rows["sysctls"].mechanism == "Bottlerocket settings.kernel.sysctl"


def test_eks_rings_and_mtu_are_set_at_boot_and_again_by_the_agent():
    # The DaemonSet reconciles rings and MTU on every selected link (agent/internal/reconcile, reconcileLink), so
    # on EKS both are the boot path's first and the agent's for links added later: neither is the platform's alone.
    for platform in ("eks-al2023", "eks-bottlerocket"):
        rows = {p.setting: p for p in tuning_paths.paths_for((platform,))}
        for setting in ("rings", "mtu"):
            assert rows[setting].applied_by == "platform + agent", (platform, setting)
            assert rows[setting].mechanism.endswith("then the agent DaemonSet"), (platform, setting)


def test_plan_lines_only_for_the_platforms_given():
    lines = tuning_paths.plan_lines(("eks-bottlerocket", "agent-daemonset"))
    headers = [line for line in lines if not line.startswith(" ") and not line.startswith("Why")]
    assert headers == ["EKS Bottlerocket:", "Any pool: the agent DaemonSet:"]
    assert lines[-1].startswith("Why the agent: ")
    # Each setting's line says why it takes that path, as the README's table does.
    rows = tuning_paths.paths_for(("eks-bottlerocket", "agent-daemonset"))
    assert [line for line in lines if line.startswith("  ")] == [
        f"  {p.setting}: {p.applied_by} ({p.mechanism}); why: {p.why}" for p in rows
    ]
