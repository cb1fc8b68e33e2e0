"""Every built-in profile on every catalog size, through the pack's own policies: a profile passes exactly on the
sizes whose line rate is at most the one it is sized for (balanced 25 Gb/s, throughput 100 Gb/s), and the
minimums are the derivation the built-in profiles are made from (wirespeed.sizing.line_rate)."""

from __future__ import annotations

import json

import pytest

from fixtures.rules.engine import config_map_with, fixture, launch_template, user_data_with_backlog, validate
from wirespeed import catalog
from wirespeed.profiles import ASSUMPTIONS, CLOUD_DRIVERS, builtin_profile
from wirespeed.sizing import line_rate

BACKLOG = "netdev-backlog-minimum"
RINGS = "nic-ring-minimum"
# The verdicts, written out rather than derived: the fastest line rate each built-in profile passes on.
PASSES_UP_TO_GBPS = {"balanced": 25.0, "throughput": 100.0}

SIZES = catalog.instance_types()


def backlog_resource(size: catalog.InstanceType, profile: str) -> tuple[str, dict]:
    backlog = builtin_profile(profile).sysctls.model_dump(by_alias=True)["net.core.netdev_max_backlog"]
    if size.cloud == "azure":
        props = fixture("aks_agent_pool")
        props["vmSize"] = size.name
        props["nodeLabels"] = {"wirespeed.io/profile": profile}
        props["linuxOSConfig"]["sysctls"]["netCoreNetdevMaxBacklog"] = backlog
        return "pool", props
    props = launch_template(user_data_with_backlog(backlog))
    props["instanceType"] = size.name
    return "launch_template", props


def profile_config_map(profile: str, gbps: float) -> dict:
    config_map = config_map_with(lambda d: None, profile)
    config_map["metadata"]["annotations"] = {"wirespeed.io/line-rate-gbps": f"{gbps:g}"}
    return config_map


def test_the_table_names_every_built_in_profile():
    assert set(PASSES_UP_TO_GBPS) == set(ASSUMPTIONS)
    assert {name: a.line_rate_gbps for name, a in ASSUMPTIONS.items()} == PASSES_UP_TO_GBPS


@pytest.mark.parametrize("profile", sorted(PASSES_UP_TO_GBPS))
@pytest.mark.parametrize("size", SIZES, ids=[s.name for s in SIZES])
def test_every_built_in_profile_on_every_catalog_size(profile, size):
    passes = size.burst_gbps <= PASSES_UP_TO_GBPS[profile]
    kind, props = backlog_resource(size, profile)
    backlog = validate(BACKLOG, kind, props)
    rings = validate(RINGS, "config_map", profile_config_map(profile, size.burst_gbps))
    assert (backlog == [], rings == []) == (passes, passes), backlog + rings
    if not passes:
        assert f"{size.burst_gbps:g} Gb/s (catalog)" in backlog[0]
        assert "profile 'throughput' is sized for 100 Gb/s" in backlog[0] or size.burst_gbps > 100


@pytest.mark.parametrize("profile", sorted(ASSUMPTIONS))
def test_built_in_profiles_sit_exactly_at_the_minimum_for_their_own_line_rate(profile):
    """One derivation: the gates' minimum for the line rate a profile assumes is the profile itself."""
    document = json.loads(builtin_profile(profile).model_dump_json(by_alias=True))
    gbps = ASSUMPTIONS[profile].line_rate_gbps
    assert document["sysctls"]["net.core.netdev_max_backlog"] == line_rate.backlog_for(gbps)
    for driver in CLOUD_DRIVERS:
        assert (document["rings"][driver]["rx"], document["rings"][driver]["tx"]) == line_rate.rings_for(driver, gbps)
