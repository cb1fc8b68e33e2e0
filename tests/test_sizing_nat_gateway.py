"""NAT gateway IP counts for Azure and AWS."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wirespeed.sizing import InfeasibleError, SizingError, plan_aws_nat_gateway, plan_azure_nat_gateway


@pytest.mark.parametrize(
    ("flows", "ips"),
    [
        pytest.param(1, 1, id="one"),
        pytest.param(64_512, 1, id="exactly-one-ip"),
        pytest.param(64_513, 2, id="one-over"),
        pytest.param(16 * 64_512, 16, id="max"),
    ],
)
def test_azure_ips(flows, ips):
    assert plan_azure_nat_gateway(flows).ips == ips


def test_azure_over_16_ips_is_infeasible():
    with pytest.raises(InfeasibleError) as info:
        plan_azure_nat_gateway(16 * 64_512 + 1)
    assert (info.value.required, info.value.available) == (1_032_193, 1_032_192)


@pytest.mark.parametrize(
    ("connections", "ips", "warned"),
    [
        pytest.param(55_000, 1, False, id="one"),
        pytest.param(110_000, 2, False, id="two-within-quota"),
        pytest.param(110_001, 3, True, id="three-needs-quota"),
        pytest.param(440_000, 8, True, id="max"),
    ],
)
def test_aws_ips_and_quota_warning(connections, ips, warned):
    plan = plan_aws_nat_gateway(connections)
    assert plan.ips == ips
    assert bool(plan.warnings) is warned


def test_aws_over_8_ips_is_infeasible_for_a_zonal_gateway_and_names_regional():
    with pytest.raises(InfeasibleError, match=r"440,001 required but 8 IPs give at most 440,000") as info:
        plan_aws_nat_gateway(440_001)
    assert info.value.suggestion.startswith("use a regional NAT gateway (up to 32 IPs per AZ)")


def test_aws_regional_takes_32_ips_per_az_and_no_per_gateway_quota_warning():
    plan = plan_aws_nat_gateway(32 * 55_000, mode="regional")
    assert (plan.ips, plan.warnings) == (32, ())
    with pytest.raises(InfeasibleError, match=r"32 IPs per AZ of a regional gateway give at most 1,760,000"):
        plan_aws_nat_gateway(32 * 55_000 + 1, mode="regional")


def test_unknown_mode_names_the_field():
    with pytest.raises(SizingError, match=r"^mode: 'global' is not allowed: 'zonal' or 'regional'$"):
        plan_aws_nat_gateway(1, mode="global")


def test_bad_input_names_field():
    with pytest.raises(SizingError) as info:
        plan_aws_nat_gateway(0)
    assert str(info.value) == "connections: 0 is not allowed: must be a whole number between 1 and 1,000,000,000"


@given(st.integers(1, 16 * 64_512))
def test_azure_minimal_and_sufficient(flows):
    plan = plan_azure_nat_gateway(flows)
    assert plan.capacity >= flows > (plan.ips - 1) * 64_512
