"""Every rule, in one tuple: what the engine and config resolution run when no rule list is given."""

from __future__ import annotations

from wirespeed.rules._model import Rule
from wirespeed.rules.agent import AGENT_LEAST_PRIVILEGE, AGENT_PRESENT
from wirespeed.rules.aks_outbound import (
    ALLOCATED_PORTS_DEFAULT,
    BASIC_LOAD_BALANCER,
    SNAT_CAPACITY,
    SNAT_PORTS_MINIMUM,
)
from wirespeed.rules.natgw import NAT_GATEWAY_CAPACITY, NAT_GATEWAY_EIP_QUOTA, NAT_GATEWAY_ZONE_REDUNDANT
from wirespeed.rules.profile_valid import PROFILE_VALID
from wirespeed.rules.sku import NETWORK_OPTIMISED_SKU
from wirespeed.rules.tuning import BACKLOG_MINIMUM, MTU_JUMBO_PATH, RING_MINIMUM

# In the order of issue 7 (and of the README's rules table); the Elastic IP quota (issue 20) beside NAT capacity.
RULES: tuple[Rule, ...] = (
    ALLOCATED_PORTS_DEFAULT,
    SNAT_CAPACITY,
    SNAT_PORTS_MINIMUM,
    BACKLOG_MINIMUM,
    RING_MINIMUM,
    NETWORK_OPTIMISED_SKU,
    AGENT_PRESENT,
    AGENT_LEAST_PRIVILEGE,
    NAT_GATEWAY_CAPACITY,
    NAT_GATEWAY_EIP_QUOTA,
    MTU_JUMBO_PATH,
    PROFILE_VALID,  # issue 17: a profile the agent refuses must not pass the other profile rules silently
    BASIC_LOAD_BALANCER,  # issue 25: the retired SKU the SNAT rules cannot size, last so existing orders stay
    NAT_GATEWAY_ZONE_REDUNDANT,  # issue 29: a zonal Standard NAT gateway for pools in several zones; StandardV2
)


def rule(rule_id: str) -> Rule:
    """The rule with this id; KeyError naming the known ids otherwise."""
    for candidate in RULES:
        if candidate.id == rule_id:
            return candidate
    raise KeyError(f"no rule {rule_id!r}: known rules are {', '.join(r.id for r in RULES)}")
