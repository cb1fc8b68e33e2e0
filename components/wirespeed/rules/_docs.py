"""The rules table of policies/wirespeed/README.md for any rules: the catalog's table (:mod:`wirespeed.rules._catalog`)
of their entries. The README's own table is written from components/wirespeed/data/rule-catalog.json."""

from __future__ import annotations

from collections.abc import Sequence

from wirespeed.rules._catalog import entry
from wirespeed.rules._catalog import markdown_table as entries_table
from wirespeed.rules._model import Rule


def markdown_table(rules: Sequence[Rule]) -> str:
    return entries_table([entry(r) for r in rules])
