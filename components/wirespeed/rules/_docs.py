"""The rules table of policies/wirespeed/README.md, generated from RULES (a test keeps the README in step)."""

from __future__ import annotations

from collections.abc import Sequence

from wirespeed.rules._model import Rule, type_key


def _default(value: object) -> str:
    if isinstance(value, bool):  # JSON's spelling, as in the config file (and not 1, which :g makes of True)
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _settings(rule: Rule) -> str:
    if not rule.config_schema:
        return "-"
    return "<br>".join(f"`{name}` = {_default(prop['default'])}" for name, prop in rule.config_schema.items())


def _types(rule: Rule) -> str:
    names = dict.fromkeys(f"`{type_key(t)[0]}:{type_key(t)[1]}:{type_key(t)[2]}`" for t in rule.types)
    return ", ".join(names)


def markdown_table(rules: Sequence[Rule]) -> str:
    lines = [
        "| rule | what it stops | scope | severity | default level | settings (default) | remediates | resources |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rule in rules:
        lines.append(
            f"| `{rule.id}` | {rule.description} | {rule.scope} | {rule.severity} | {rule.default_enforcement} | "
            f"{_settings(rule)} | {'yes' if rule.remediate else 'no'} | {_types(rule)} |"
        )
    return "\n".join(lines) + "\n"
