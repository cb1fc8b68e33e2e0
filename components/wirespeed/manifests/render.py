"""Kubernetes objects as multi-document YAML for `kubectl apply -f -`: keys in the order the objects were
built (apiVersion, kind, metadata, spec), multi-line strings such as the profile JSON as literal blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    """SafeDumper that writes multi-line strings as `|` blocks, so the profile reads as JSON in a review."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(objects: Sequence[dict[str, Any]], header: str = "") -> str:
    """Objects as YAML documents separated by `---`; ``header`` lines become `#` comments on top."""
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    body = yaml.dump_all(
        objects, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120, explicit_start=True
    )
    return comment + body
