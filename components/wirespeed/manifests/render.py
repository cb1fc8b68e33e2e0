"""Kubernetes objects as multi-document YAML for `kubectl apply -f -`: keys in the order the objects were
built (apiVersion, kind, metadata, spec), multi-line strings such as the profile JSON as literal blocks, and every
string quoted that some YAML reader (kubectl's included) would read as another type (wirespeed.yaml_text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wirespeed import yaml_text


def to_yaml(objects: Sequence[dict[str, Any]], header: str = "") -> str:
    """Objects as YAML documents separated by `---`; ``header`` lines become `#` comments on top."""
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    body = yaml_text.dump_all(objects, sort_keys=False, default_flow_style=False, width=120, explicit_start=True)
    return comment + body
