"""The one reader of YAML a user wrote (Pulumi.yaml, Pulumi.<stack>.yaml, kubeconfigs): bounded in size, in the
nodes its aliases expand to, and in depth.

A YAML file a few hundred bytes long can name a node that names another nine times, and so on ("billion laughs"):
PyYAML builds it as a shared graph at once, but everything after it that walks the values as a tree (the config
map's JSON encoding, the program's own code) takes time and memory exponential in the file's size. And a file of
``[[[[...`` nests past the recursion of PyYAML's composer. Both are refused here while the file is read, naming
the file and the line, in time and memory bounded by the file's size cap: every node is counted as it is
composed, an alias counting every node of what it names, and composing stops at the first node over either
bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from wirespeed.io_limits import InputFileError, read_text

# wirespeed's choice: a YAML file may hold at most this many nodes once every alias is expanded. Each node takes
# at least one byte of its file, so no alias-free file under the 1 MiB cap on a Pulumi.yaml or stack file
# (io_limits.SMALL_LIMIT) can reach it; real ones hold hundreds, a kubeconfig with hundreds of contexts a few
# thousand (its certificates are one node each). Walking a million nodes as a tree takes well under a second.
YAML_NODE_LIMIT = 1 << 20
# wirespeed's choice: real config nests a handful of levels. 100 stays far below the depth at which PyYAML's
# recursive composer (three Python frames a level with the counting below) meets Python's default recursion
# limit of 1,000 frames, and below it for every recursive walk of the values afterwards.
YAML_DEPTH_LIMIT = 100


class YamlLimitError(Exception):
    """A document past :data:`YAML_NODE_LIMIT` or :data:`YAML_DEPTH_LIMIT`, or whose alias names its own node."""

    def __init__(self, reason: str, mark: Any) -> None:
        self.reason = reason
        self.line = None if mark is None else int(mark.line) + 1
        super().__init__(reason)


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, counting as it composes: the nodes of the document with every alias expanded, and
    the depth of the node being composed. Construction then works on a graph known to be small as a tree. The
    count runs over every document of the stream, so a multi-document file is bounded as a whole (check's
    Kubernetes YAML reads its documents through this loader too)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._expanded = 0
        self._depth = 0
        # The expanded size of each anchored node, known once the node is finished: an alias met while its node
        # is still being composed is a recursive document (a tree walk of it never ends).
        self._sizes: dict[str, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]  # the stubs leave it unannotated
        if isinstance(event, yaml.AliasEvent):
            anchor = str(event.anchor)
            if anchor in self.anchors:  # an undefined alias is PyYAML's own error, raised by the call below
                if anchor not in self._sizes:
                    raise YamlLimitError(
                        f"the alias *{anchor} is inside the node &{anchor} it names (a recursive document); "
                        "write the value out instead",
                        event.start_mark,
                    )
                self._count(self._sizes[anchor], event.start_mark)
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > YAML_DEPTH_LIMIT:
            raise YamlLimitError(
                f"nests deeper than the {YAML_DEPTH_LIMIT} levels a YAML file may have; flatten it",
                event.start_mark,
            )
        before = self._expanded
        self._count(1, event.start_mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        if event.anchor is not None:
            self._sizes[str(event.anchor)] = self._expanded - before
        return node

    def _count(self, nodes: int, mark: Any) -> None:
        self._expanded += nodes
        if self._expanded > YAML_NODE_LIMIT:
            raise YamlLimitError(
                f"its aliases expand it past the {YAML_NODE_LIMIT:,} nodes a YAML file may have with every alias "
                'expanded (a "billion laughs" document); write the repeated values out, or alias less',
                mark,
            )


def load_yaml(text: str, label: str) -> Any:
    """The one YAML document in ``text``, as PyYAML's safe loader reads it, within the bounds above.

    Raises :class:`InputFileError` naming ``label`` (and the line, where there is one) for a document that is
    not YAML or passes a bound.
    """
    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    except YamlLimitError as exc:
        where = "" if exc.line is None else f"line {exc.line}: "
        raise InputFileError(label, f"{where}{exc.reason}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise InputFileError(label, f"{where}is not valid YAML ({problem})") from None
    finally:
        loader.dispose()


def read_yaml(path: Path, limit: int, shown: str | None = None, what: str = "YAML file") -> Any:
    """The YAML document in the regular file ``path`` (at most ``limit`` bytes): :func:`io_limits.read_text`
    then :func:`load_yaml`, every failure an :class:`InputFileError` naming ``shown`` (default: the path)."""
    return load_yaml(read_text(path, limit, shown, what), shown if shown is not None else str(path))
