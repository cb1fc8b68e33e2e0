"""The AKS outbound SNAT rules under their old home: each rule is its own module now, named by its rule ID (see
docs/architecture.md). This module only re-exports the names it used to hold, so ``from wirespeed.rules.aks_outbound
import ...`` keeps working."""

from __future__ import annotations

from wirespeed.rules._aks_outbound import (
    AKS_LB_DOC,
    BASIC_RETIRED_DOC,
    BASIC_RETIRED_ON,
    DEFAULT_MINIMUM_PORTS,
    LB_DEFAULTS_DOC,
    PORTS_FIELD,
)
from wirespeed.rules.aks_allocated_outbound_ports_default import (
    ALLOCATED_PORTS_DEFAULT,
    check_allocated_ports_default,
    dynamic_table_text,
)
from wirespeed.rules.aks_basic_load_balancer import BASIC_LOAD_BALANCER, check_basic_load_balancer
from wirespeed.rules.aks_snat_capacity import SNAT_CAPACITY, check_snat_capacity
from wirespeed.rules.aks_snat_ports_minimum import SNAT_PORTS_MINIMUM, check_ports_minimum

__all__ = [
    "AKS_LB_DOC",
    "ALLOCATED_PORTS_DEFAULT",
    "BASIC_LOAD_BALANCER",
    "BASIC_RETIRED_DOC",
    "BASIC_RETIRED_ON",
    "DEFAULT_MINIMUM_PORTS",
    "LB_DEFAULTS_DOC",
    "PORTS_FIELD",
    "SNAT_CAPACITY",
    "SNAT_PORTS_MINIMUM",
    "check_allocated_ports_default",
    "check_basic_load_balancer",
    "check_ports_minimum",
    "check_snat_capacity",
    "dynamic_table_text",
]
