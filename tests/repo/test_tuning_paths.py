"""The one table of which path each setting takes (wirespeed.tuning_paths): complete, and what the docs page (which
the README links to) and `wirespeed plan` show. Regenerate docs/tuning-paths.md: python -m wirespeed.tuning_paths
"""

from __future__ import annotations

import itertools

from conftest import ROOT
from wirespeed import tuning_paths
from wirespeed.tuning_paths import PATHS, PLATFORMS, SETTINGS


def test_every_platform_has_every_setting_once():
    pairs = [(p.platform, p.setting) for p in PATHS]
    assert sorted(pairs) == sorted(itertools.product(PLATFORMS, SETTINGS))


def test_the_docs_page_shows_the_table_and_the_readme_links_to_it():
    readme = (ROOT / "README.md").read_text()
    assert "(docs/tuning-paths.md)" in readme
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
    # Each setting's line says why it takes that path, as the docs page's table does.
    rows = tuning_paths.paths_for(("eks-bottlerocket", "agent-daemonset"))
    assert [line for line in lines if line.startswith("  ")] == [
        f"  {p.setting} [{p.applied_by}]: {p.mechanism}; why: {p.why}" for p in rows
    ]


def test_an_eks_plan_never_speaks_of_azure_and_an_aks_plan_never_of_eks():
    eks = "\n".join(tuning_paths.plan_lines(("eks-al2023", "eks-bottlerocket", "agent-daemonset")))
    aks = "\n".join(tuning_paths.plan_lines(("aks-node-pool", "aks-nap", "agent-daemonset")))
    for word in ("AKS", "Azure", "Microsoft"):
        assert word not in eks, eks
    for word in ("EKS", "ENI", "Bottlerocket"):
        assert word not in aks, aks
    assert "secondary ENIs" in eks
    assert "Azure/AKS/issues/4959" in aks
    # The whole text (the docs page) says both.
    assert "secondary ENIs" in tuning_paths.WHY_AGENT
    assert "Azure/AKS/issues/4959" in tuning_paths.WHY_AGENT


def test_plan_lines_nest_no_parentheses():
    lines = tuning_paths.plan_lines(tuple(PLATFORMS))
    assert not [line for line in lines if "))" in line]
    boot_script_mtu = "  mtu [platform + agent]: user data: the boot script (ip link set mtu); "
    assert any(line.startswith(boot_script_mtu) for line in lines)
