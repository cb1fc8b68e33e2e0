"""The rule catalog (components/wirespeed/data/rule-catalog.json) is the rules' one generated description: equal to
what the rule modules declare, the source of the pack README's table and of SARIF's rule descriptors, and what the
`check` golden files refer to (tests/fixtures/rule_catalog.py) instead of repeating it."""

from __future__ import annotations

import copy
import json

from fixtures.rule_catalog import golden_form
from wirespeed import rule_catalog
from wirespeed.rules import RULES
from wirespeed.rules._catalog import render, sarif_rule


def test_the_catalog_file_is_what_the_rules_declare():
    assert rule_catalog.CATALOG.read_text() == render(RULES), "rule-catalog.json is stale: run `make regen`"


def test_the_catalog_lists_every_registered_rule_in_order():
    assert [e["id"] for e in rule_catalog.load()] == [r.id for r in RULES]
    assert [e["order"] for e in rule_catalog.load()] == [r.order for r in RULES]


def test_the_pack_readme_table_is_the_catalog():
    readme = rule_catalog.PACK_README.read_text()
    assert readme == rule_catalog.readme_with_table(readme, rule_catalog.load()), "run `make regen`"


def _sarif(levels: dict[str, str]) -> dict[str, object]:
    rules = [sarif_rule(e, levels.get(e["id"], e["defaultEnforcement"])) for e in rule_catalog.load()]
    return {"runs": [{"tool": {"driver": {"name": "wirespeed", "rules": rules}}}]}


def test_golden_form_refers_to_the_catalog_only_where_the_output_is_the_catalog():
    first = rule_catalog.load()[0]["id"]
    doc = _sarif({first: "disabled"})
    said = json.loads(golden_form(json.dumps(doc), "sarif.json"))
    assert said["runs"][0]["tool"]["driver"]["rules"] == {
        "$ref": rule_catalog.CATALOG_NAME,
        "levels": {first: "disabled"},
    }
    edited = copy.deepcopy(doc)
    edited["runs"][0]["tool"]["driver"]["rules"][0]["help"]["text"] = "not what the catalog says"  # type: ignore[index]
    assert json.loads(golden_form(json.dumps(edited), "sarif.json")) == edited  # kept whole: the diff shows it


def test_golden_form_keeps_the_disabled_rules_and_counts():
    ids = [e["id"] for e in rule_catalog.load()]
    said = json.loads(golden_form(json.dumps({"rules": ids[1:]}), "json"))
    assert said["rules"] == {"$ref": rule_catalog.CATALOG_NAME, "disabled": ids[:1]}
    assert json.loads(golden_form(json.dumps({"rules": ids[::-1]}), "json"))["rules"] == ids[::-1]
    assert golden_form(f"x, against {len(ids) - 2} rules.", "txt") == "x, against {len(rule-catalog.json) - 2} rules."
    assert golden_form(f"against {len(ids) + 1} rules", "txt") == f"against {len(ids) + 1} rules"
