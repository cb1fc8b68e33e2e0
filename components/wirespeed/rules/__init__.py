"""wirespeed's policy rules: pure functions over resource properties as Pulumi's policy engine passes them.

One rules engine for the CrossGuard pack (``policies/wirespeed``, through ``wirespeed.policy_pack``) and for
``wirespeed check`` on exported stacks and plans::

    from wirespeed import rules
    config = rules.resolve_config({"all": "mandatory", "aks-snat-ports-minimum": {"minimumPorts": 2048}})
    rules.evaluate_resource(rules.Resource(type, name, urn, props), config)   # resource rules (inputs)
    rules.evaluate_stack(resources, config)                                    # stack rules (outputs)
    rules.remediate(resource, config)                                          # new props, or None

Props are read-only Mappings with camelCase engine names and every number a float; a value unknown during
preview makes a rule not applicable, never a crash. Nothing here imports Pulumi.
"""

from __future__ import annotations

from wirespeed.rules._accept import ACCEPT_PREFIX, accept_key
from wirespeed.rules._accepted_args import accepted_advisories_problems, accepted_labels
from wirespeed.rules._config import ALL, LEVEL_KEY, Config, ConfigError, resolve_config
from wirespeed.rules._engine import (
    check_resource,
    check_stack,
    evaluate,
    evaluate_resource,
    evaluate_stack,
    remediate,
    remediate_with,
    reported_level,
)
from wirespeed.rules._model import (
    ENFORCEMENTS,
    SEVERITIES,
    Enforcement,
    Finding,
    Reads,
    Related,
    Resource,
    Rule,
    Scope,
    Severity,
    Violation,
    in_view,
    type_key,
    viewing,
)
from wirespeed.rules._registry import RULES, rule
from wirespeed.values import UNKNOWN_SENTINELS

__all__ = [
    "ACCEPT_PREFIX",
    "ALL",
    "ENFORCEMENTS",
    "LEVEL_KEY",
    "RULES",
    "SEVERITIES",
    "UNKNOWN_SENTINELS",
    "Config",
    "ConfigError",
    "Enforcement",
    "Finding",
    "Reads",
    "Related",
    "Resource",
    "Rule",
    "Scope",
    "Severity",
    "Violation",
    "accept_key",
    "accepted_advisories_problems",
    "accepted_labels",
    "check_resource",
    "check_stack",
    "evaluate",
    "evaluate_resource",
    "evaluate_stack",
    "in_view",
    "remediate",
    "remediate_with",
    "reported_level",
    "resolve_config",
    "rule",
    "type_key",
    "viewing",
]
