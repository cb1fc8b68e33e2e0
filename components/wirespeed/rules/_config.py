"""Policy configuration, shaped as Pulumi's ``--policy-pack-config`` file.

    {"all": "mandatory",
     "aks-snat-ports-minimum": {"enforcementLevel": "advisory", "minimumPorts": 2048},
     "mtu-jumbo-path": "disabled"}

``all`` sets every rule's level; a rule's own entry (a level, or an object with ``enforcementLevel`` and its
settings) wins over it. ``check`` holds what `wirespeed check` alone reads: ``{"check": {"requireJudged": true}}``
fails an input in which no resource is of a type some rule reads (the policy engine ignores the entry: it names no
policy). Settings are validated against each rule's JSON Schema, every problem reported at once,
and defaults are filled in, so a rule always reads a complete, valid settings mapping.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wirespeed.errors import UserError
from wirespeed.problems import did_you_mean, quoted_number
from wirespeed.rules._model import ENFORCEMENTS, Enforcement, Rule
from wirespeed.rules._registry import RULES

ALL = "all"
CHECK = "check"  # `wirespeed check`'s own settings, beside the rules'
REQUIRE_JUDGED = "requireJudged"
LEVEL_KEY = "enforcementLevel"  # reserved by Pulumi in every policy's config


class ConfigError(UserError, ValueError):
    """The policy config is invalid; ``problems`` lists (where, what is wrong), one per bad entry."""

    field = "config"

    def __init__(self, problems: Sequence[tuple[str, str]]):
        self.problems = list(problems)
        super().__init__("invalid policy config:\n" + "\n".join(f"  {where}: {what}" for where, what in self.problems))


@dataclass(frozen=True)
class Config:
    """Resolved config: every rule's enforcement level and complete settings (defaults filled in)."""

    levels: Mapping[str, Enforcement]
    settings: Mapping[str, Mapping[str, Any]]
    require_judged: bool = False  # check.requireJudged

    def level(self, rule_id: str) -> Enforcement:
        return self.levels[rule_id]

    def settings_for(self, rule_id: str) -> Mapping[str, Any]:
        return self.settings[rule_id]


def _json(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, default=repr)


def _level(where: str, value: object, problems: list[tuple[str, str]]) -> Enforcement | None:
    if isinstance(value, str) and value in ENFORCEMENTS:
        return value
    problems.append((where, f"{_json(value)} is not allowed: must be one of {', '.join(ENFORCEMENTS)}"))
    return None


def _schema_problems(rule: Rule, values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every way ``values`` breaks the rule's schema, as (where, what) pairs."""
    import jsonschema  # only when a config is given: its import costs more than checking a stack

    schema = {"type": "object", "properties": dict(rule.config_schema), "additionalProperties": False}
    validator = jsonschema.Draft202012Validator(schema)
    problems: list[tuple[str, str]] = []
    seen: set[str] = set()
    for error in sorted(validator.iter_errors(dict(values)), key=lambda e: [str(p) for p in e.absolute_path]):
        if error.validator == "additionalProperties":
            known = ", ".join([LEVEL_KEY, *sorted(rule.config_schema)])
            for name in sorted(set(values) - set(rule.config_schema)):
                near = did_you_mean(name, [LEVEL_KEY, *rule.config_schema])
                problems.append((f"{rule.id}.{name}", f"is not a setting of this rule{near} (known: {known})"))
            continue
        where = ".".join([rule.id, *(str(p) for p in error.absolute_path)])
        if where in seen:
            continue  # one line per setting: its allowed range says it all (3.5 fails both type and minimum)
        seen.add(where)
        prop = rule.config_schema.get(str(error.absolute_path[0]), {}) if error.absolute_path else {}
        allowed = _allowed(prop, error.message)
        if isinstance(error.instance, str) and prop.get("type") in ("integer", "number"):
            allowed = quoted_number(error.instance, allowed)
        problems.append((where, f"{_json(error.instance)} is not allowed: {allowed}"))
    return problems


def _allowed(prop: Mapping[str, Any], fallback: str) -> str:
    kind = prop.get("type")
    low, high = prop.get("minimum"), prop.get("maximum")
    if kind in ("integer", "number") and low is not None and high is not None:
        word = "a whole number" if kind == "integer" else "a number"
        return f"must be {word} between {low:,} and {high:,}"
    if kind in ("integer", "number") and low is not None:
        word = "a whole number" if kind == "integer" else "a number"
        return f"must be {word} >= {low:,}"
    if kind == "boolean":
        return "must be true or false"
    return fallback


def resolve_config(user_config: Mapping[str, Any] | None, rules: Sequence[Rule] | None = None) -> Config:
    """Validate a policy config document and fill in every default. Raises :class:`ConfigError` listing
    every problem (unknown rule ids, bad levels, settings outside their schema)."""
    if rules is None:
        rules = RULES
    user_config = user_config or {}
    problems: list[tuple[str, str]] = []
    if not isinstance(user_config, Mapping):
        raise ConfigError([("(config)", f"must be a JSON object, got {type(user_config).__name__}")])
    by_id = {rule.id: rule for rule in rules}
    for key in user_config:
        if key not in (ALL, CHECK) and key not in by_id:
            near = did_you_mean(str(key), [ALL, CHECK, *by_id])
            problems.append(
                (str(key), f"is not a wirespeed rule{near} (known: {ALL}, {CHECK}, {', '.join(sorted(by_id))})")
            )
    require_judged = _check_settings(user_config.get(CHECK), problems)

    all_level: Enforcement | None = None
    if ALL in user_config:
        entry = user_config[ALL]
        if isinstance(entry, Mapping):
            extra = sorted(set(entry) - {LEVEL_KEY})
            for name in extra:
                near = did_you_mean(name, [LEVEL_KEY])
                problems.append((f"{ALL}.{name}", f"is not allowed{near}: '{ALL}' takes only {LEVEL_KEY}"))
            all_level = _level(f"{ALL}.{LEVEL_KEY}", entry.get(LEVEL_KEY), problems) if LEVEL_KEY in entry else None
        else:
            all_level = _level(ALL, entry, problems)

    levels: dict[str, Enforcement] = {}
    settings: dict[str, Mapping[str, Any]] = {}
    for rule in rules:
        level = all_level or rule.default_enforcement
        values: dict[str, Any] = {}
        entry = user_config.get(rule.id)
        if isinstance(entry, Mapping):
            values = {k: v for k, v in entry.items() if k != LEVEL_KEY}
            if LEVEL_KEY in entry:
                level = _level(f"{rule.id}.{LEVEL_KEY}", entry[LEVEL_KEY], problems) or level
            if values:
                problems.extend(_schema_problems(rule, values))
        elif entry is not None:
            level = _level(rule.id, entry, problems) or level
        levels[rule.id] = level
        settings[rule.id] = {**rule.defaults(), **values}
    if problems:
        raise ConfigError(problems)
    return Config(levels=levels, settings=settings, require_judged=require_judged)


def _check_settings(entry: object, problems: list[tuple[str, str]]) -> bool:
    """``check.requireJudged`` (False without a ``check`` entry)."""
    if entry is None:
        return False
    if not isinstance(entry, Mapping):
        problems.append((CHECK, f'{_json(entry)} is not allowed: an object such as {{"{REQUIRE_JUDGED}": true}}'))
        return False
    for name in sorted(set(entry) - {REQUIRE_JUDGED}):
        near = did_you_mean(name, [REQUIRE_JUDGED])
        problems.append((f"{CHECK}.{name}", f"is not allowed{near}: '{CHECK}' takes only {REQUIRE_JUDGED}"))
    value = entry.get(REQUIRE_JUDGED, False)
    if not isinstance(value, bool):
        problems.append((f"{CHECK}.{REQUIRE_JUDGED}", f"{_json(value)} is not allowed: must be true or false"))
        return False
    return value
