"""One Terraform document read resource by resource: resources now, pools once their clusters are known."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from wirespeed.check.readonly import ReadOnlyMapping
from wirespeed.check.terraform.blocks import has_unknown, known_text, settle
from wirespeed.check.terraform.configuration import Configuration, config_address, join
from wirespeed.check.terraform.translations import (
    CLUSTER_NAMES,
    KUBERNETES_MANIFEST,
    LINKS,
    MANIFEST_FIELDS,
    TRANSLATIONS,
    translate,
)
from wirespeed.rules import Resource, Violation
from wirespeed.values import UNKNOWN, at

JSON_FORMAT_DOC = "https://developer.hashicorp.com/terraform/internals/json-format"

# Change Representation: the actions after which the resource exists (a replacement is ["delete", "create"]
# or ["create", "delete"]).
KEPT_ACTIONS = frozenset({"create", "update", "no-op"})


@dataclass
class _Pending:
    tf_type: str
    address: str
    module: str
    values: Any
    offset: int


Located = tuple[Resource, int]
# The property an unknown-value violation names (rules._engine.unknown_message).
_UNKNOWN_PATH = re.compile(r"could not be checked: (\S+) is known only after apply")


class Reader:
    """The translation state of one Terraform document: configuration links, clusters seen, pools waiting for
    both (a pool may come before its cluster, and ``configuration`` after both), and each address's type."""

    def __init__(self) -> None:
        self.configuration = Configuration()
        self.clusters: dict[str, list[tuple[str, str | None]]] = {}  # config address -> [(address, name)]
        self.pending: list[_Pending] = []
        # Resources with values unknown until apply wait for ``configuration`` (written after resource_changes):
        # only it tells an unknown nobody wrote (the provider's default) from one the configuration computes.
        self.unsettled: list[_Pending] = []
        self.types: dict[str, str] = {}  # address -> Terraform type, for translated resources

    def resource(self, tf_type: str, address: str, module: str, values: Any, offset: int) -> Located | None:
        """The resource now, or None when it waits for its cluster or for the configuration (see :meth:`linked`)."""
        if has_unknown(values) and (tf_type in TRANSLATIONS or tf_type in LINKS or tf_type == KUBERNETES_MANIFEST):
            self.unsettled.append(_Pending(tf_type, address, module, values, offset))
            return None
        return self._resource(tf_type, address, module, values, offset)

    def _resource(self, tf_type: str, address: str, module: str, values: Any, offset: int) -> Located | None:
        if tf_type in CLUSTER_NAMES:
            name = known_text(at(values, "name"))
            self.clusters.setdefault(config_address(address), []).append((address, name))
        if tf_type in LINKS:
            self.pending.append(_Pending(tf_type, address, config_address(module), values, offset))
            return None
        resource = translate(tf_type, address, values)
        if resource.type != tf_type:
            self.types[address] = tf_type
        return resource, offset

    def linked(self) -> Iterator[Located]:
        """The resources that waited for the configuration, settled (:func:`~.blocks.settle`), then the pools, each
        linked to the clusters its configuration references (or the one cluster of its module)."""
        for waiting in self.unsettled:
            written = self.configuration.expressions.get(config_address(waiting.address))
            values = settle(waiting.values, written)
            located = self._resource(waiting.tf_type, waiting.address, waiting.module, values, waiting.offset)
            if located is not None:
                yield located
        self.unsettled = []
        for pool in self.pending:
            attribute, cluster_type, prop = LINKS[pool.tf_type]
            resource = translate(pool.tf_type, pool.address, pool.values)
            self.types[pool.address] = pool.tf_type
            clusters = self._clusters_of(pool, attribute, cluster_type)
            if clusters:
                names = {name for _, name in clusters}
                props = dict(resource.props)
                if props.get(prop) in (None, UNKNOWN) and len(names) == 1 and None not in names:
                    props[prop] = names.pop()
                view = ReadOnlyMapping(props)
                resource = replace(
                    resource,
                    props=view,
                    outputs=view,
                    property_dependencies={prop: tuple(address for address, _ in clusters)},
                )
            yield resource, pool.offset
        self.pending = []

    def _clusters_of(self, pool: _Pending, attribute: str, cluster_type: str) -> list[tuple[str, str | None]]:
        own = config_address(pool.address)
        refs = self.configuration.references.get((own, attribute))
        if refs is not None:
            targets: set[str] = set()
            for ref in refs:
                targets |= self.configuration.targets(ref, pool.module, cluster_type)
            return [c for target in sorted(targets) for c in self.clusters.get(target, ())]
        if self.configuration.seen:
            return []  # configured without a reference to a cluster (a literal id or name): the name links it
        prefix = join(pool.module, f"{cluster_type}.")
        here = [
            c
            for key, found in self.clusters.items()
            if key.startswith(prefix) and "." not in key[len(prefix) :]
            for c in found
        ]
        return here if len(here) == 1 else []

    def adjust(self, violation: Violation) -> Violation:
        """A violation as a Terraform user reads it: the Terraform type, and the attribute names of its fields."""
        tf_type = self.types.get(violation.resource_urn)
        if tf_type is None:
            return violation
        translation = TRANSLATIONS.get(tf_type)
        fields = MANIFEST_FIELDS if tf_type == KUBERNETES_MANIFEST else translation.fields if translation else ()
        names = [
            f"{pulumi} is {terraform}"
            for pulumi, terraform in fields
            # The whole name only: allocationIds is no mention of allocationId.
            if re.search(rf"(?<![A-Za-z]){re.escape(pulumi)}(?![A-Za-z])", violation.message)
        ]
        if violation.unknown and translation is not None:
            unknown = _UNKNOWN_PATH.search(violation.message)
            block = unknown and next((b for b in translation.blocks if unknown.group(1) == b[0]), None)
            if block:
                names.insert(0, f"{block[0]} is {block[1]}")
        message = violation.message + (f" (In Terraform: {'; '.join(names)}.)" if names else "")
        return replace(violation, resource_type=tf_type, message=message)
