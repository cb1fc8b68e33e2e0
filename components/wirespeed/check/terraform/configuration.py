"""Configuration Representation: how a pool's cluster reference runs through ``var.*`` module inputs and
``module.*`` outputs to the cluster resource it names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wirespeed.check.terraform.translations import LINKS, is_read

# An instance key in an address: [0] or ["key"] (Terraform escapes quotes inside the key with a backslash).
INDEX = re.compile(r'\[(?:\d+|"(?:[^"\\]|\\.)*")\]')


def config_address(address: str) -> str:
    """The configuration address of an instance: ``module.a[0].x.y["k"]`` -> ``module.a.x.y``."""
    return INDEX.sub("", address)


def join(module: str, address: str) -> str:
    return f"{module}.{address}" if module else address


def parent(module: str) -> str:
    """``module.a.module.b`` -> ``module.a``; ``module.a`` -> the root ("")."""
    head, _, _ = module.rpartition(".module.")
    return head if module.count("module.") > 1 else ""


@dataclass
class Configuration:
    """The references ``configuration`` holds that link pools to clusters, by module path ("" for the root)."""

    # (pool config address, attribute) -> references
    references: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    # module path -> input variable -> references in the calling module
    inputs: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # module path -> output -> references inside that module
    outputs: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # config address -> the resource's ``expressions`` (what its configuration writes), for the types wirespeed reads
    expressions: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    seen: bool = False

    def add_module(self, module: Mapping[str, Any], path: str) -> None:
        """One configuration module (decoded), its resources' links, outputs and calls, recursively."""
        # Lenient: a part of the configuration that is not in the documented shape links nothing (the pool's
        # cluster then stays unknown, as without a reference); only the planned values are judged.
        resources = module.get("resources")
        for resource in resources if isinstance(resources, list) else ():
            if not isinstance(resource, dict):
                continue
            tf_type = str(resource.get("type"))
            link = LINKS.get(tf_type)
            address = resource.get("address")
            if not isinstance(address, str) or resource.get("mode", "managed") != "managed":
                continue
            if is_read(tf_type) and isinstance(resource.get("expressions"), dict):
                self.expressions[join(path, address)] = resource["expressions"]
            if link is None:
                continue
            expressions = _mapping(resource.get("expressions"))
            refs = _all_references(expressions) if link[0] == "*" else _references(expressions.get(link[0]))
            self.references[(join(path, address), link[0])] = refs
        for name, output in _mapping(module.get("outputs")).items():
            if isinstance(output, dict):
                self.outputs.setdefault(path, {})[name] = _references(output.get("expression"))
        for name, call in _mapping(module.get("module_calls")).items():
            if isinstance(call, dict):
                self.add_call(name, call, path)

    def add_call(self, name: str, call: Mapping[str, Any], path: str) -> None:
        child = join(path, f"module.{name}")
        for variable, expression in _mapping(call.get("expressions")).items():
            self.inputs.setdefault(child, {})[variable] = _references(expression)
        module = call.get("module")
        if isinstance(module, dict):
            self.add_module(module, child)

    def targets(self, reference: str, module: str, wanted: str, depth: int = 0) -> set[str]:
        """Configuration addresses of ``wanted``-type resources a reference made in ``module`` leads to."""
        if depth > 32:  # a reference cycle cannot be valid configuration; stop rather than recurse forever
            return set()
        parts = [INDEX.sub("", p) for p in reference.split(".")]
        if parts[0] == "var" and len(parts) > 1:
            found: set[str] = set()
            for ref in self.inputs.get(module, {}).get(parts[1], ()):
                found |= self.targets(ref, parent(module), wanted, depth + 1)
            return found
        if parts[0] == "module" and len(parts) > 2:
            child = join(module, f"module.{parts[1]}")
            found = set()
            for ref in self.outputs.get(child, {}).get(parts[2], ()):
                found |= self.targets(ref, child, wanted, depth + 1)
            return found
        if parts[0] == wanted and len(parts) > 1:
            return {join(module, f"{parts[0]}.{parts[1]}")}
        return set()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _references(expression: Any) -> list[str]:
    if not isinstance(expression, dict):
        return []
    refs = expression.get("references")
    return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


def _all_references(expressions: Any) -> list[str]:
    """Every reference in a resource's expressions, nested blocks included."""
    if isinstance(expressions, list):
        return [ref for item in expressions for ref in _all_references(item)]
    if not isinstance(expressions, dict):
        return []
    found = _references(expressions)
    for key, value in expressions.items():
        if key not in ("references", "constant_value"):
            found += _all_references(value)
    return found
