"""Every rule, found rather than listed: what the engine and config resolution run when no rule list is given.

A rule is one module of this package named by its rule ID (``netdev-backlog-minimum`` is
``netdev_backlog_minimum.py``) that exports it as ``RULE``; modules whose name starts with ``_`` hold what several
rules share, and a module without ``RULE`` (``tuning``, ``agent``...: the old homes, re-exporting) is not a rule.
:data:`RULES` is in ascending :attr:`Rule.order`, the order of every output that lists rules (the pack, ``check``'s
SARIF rules and JSON ``rules``, the pack README's table, components/wirespeed/data/rule-catalog.json), so adding a
rule never reorders the others. docs/architecture.md ("To add a rule") says which files a new rule touches.
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
from pathlib import Path

from wirespeed.rules._model import Rule

PACKAGE = "wirespeed.rules"
HERE = Path(__file__).parent  # the package's folder (not the package: its __init__ imports this module)


def module_name(rule_id: str) -> str:
    """The module a rule lives in: its ID with ``-`` as ``_`` (``mtu-jumbo-path`` -> ``mtu_jumbo_path``)."""
    return rule_id.replace("-", "_")


def discover() -> tuple[Rule, ...]:
    """Each module's ``RULE``, in :attr:`Rule.order`; ValueError when a module's rule is misnamed or two rules
    claim one place."""
    found: list[Rule] = []
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.name.startswith("_"):
            continue
        declared = getattr(importlib.import_module(f"{PACKAGE}.{info.name}"), "RULE", None)
        if declared is None:
            continue
        if not isinstance(declared, Rule) or module_name(declared.id) != info.name:
            raise ValueError(
                f"{PACKAGE}.{info.name}.RULE is {getattr(declared, 'id', declared)!r}: a rule module exports its own "
                f"rule as RULE and is named by its ID (rule {getattr(declared, 'id', '?')!r} belongs in "
                f"{module_name(str(getattr(declared, 'id', '?')))}.py)"
            )
        found.append(declared)
    found.sort(key=lambda r: r.order)
    for before, after in itertools.pairwise(found):
        if before.order == after.order:
            raise ValueError(
                f"rules {before.id!r} and {after.id!r} both declare order={after.order}: each rule's order is unique; "
                f"give the newer one order={found[-1].order + 10} (after the last rule)"
            )
    if found and found[0].order <= 0:
        raise ValueError(
            f"rule {found[0].id!r} declares order={found[0].order}: order is a positive int; give it "
            f"order={found[-1].order + 10} to place it after the last rule"
        )
    return tuple(found)


RULES: tuple[Rule, ...] = discover()


def rule(rule_id: str) -> Rule:
    """The rule with this id; KeyError naming the known ids otherwise."""
    for candidate in RULES:
        if candidate.id == rule_id:
            return candidate
    raise KeyError(f"no rule {rule_id!r}: known rules are {', '.join(r.id for r in RULES)}")
