"""Kubernetes YAML (what a GitOps repository holds, what `kubectl apply -f` takes) read as the objects the rules judge.

A file of one or more YAML documents (``---`` between them), each a Kubernetes object with ``apiVersion``, ``kind``
and ``metadata`` (https://kubernetes.io/docs/concepts/overview/working-with-objects/#required-fields), or a
``kind: List`` of them (what ``kubectl get -o yaml`` prints). Each object becomes the resource a Pulumi
``kubernetes:<group>/<version>:<Kind>`` resource or a Terraform ``kubernetes_manifest`` becomes: its type token from
``apiVersion`` and ``kind`` (:func:`wirespeed.check.terraform.kubernetes.manifest_type`), its props the object as
written. So Karpenter NodePools (``karpenter.sh/v1``), EC2NodeClasses (``karpenter.k8s.aws/v1``), AKSNodeClasses
(``karpenter.azure.com``) and the ConfigMaps and DaemonSet `wirespeed render node-tuning` prints are judged by the
same rules, whichever of the three wrote them.

YAML is hostile input like any other: the text is capped (:data:`YAML_LIMIT`), so are the documents in it
(:data:`MAX_DOCUMENTS`), and an alias (``*name``) is refused, since a few hundred bytes of nested aliases expand to
gigabytes ("billion laughs"); no Kubernetes object needs one. :func:`load_documents` is the one place YAML is parsed.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from wirespeed.io_limits import MIB, size_text

# wirespeed's choice: PyYAML's pure-Python loader (the only one whose composer can refuse aliases) reads about
# 1 MiB/s, so 8 MiB bounds a file to seconds; the largest rendered manifests we have seen (a cluster's whole
# `helm template` output) are well under 1 MiB.
YAML_LIMIT = 8 * MIB
MAX_DOCUMENTS = 10_000  # wirespeed's choice: a file of more objects than this is not a cluster's manifests
MAX_DEPTH = 64  # no Kubernetes object nests this deep; deeper is an attack on the recursion limit


class YamlError(ValueError):
    """The text is not YAML wirespeed reads: ``line`` is 1-based, or 0 when the problem has no place."""

    def __init__(self, message: str, line: int = 0) -> None:
        self.line = line
        super().__init__(message)


@dataclass(frozen=True)
class YamlDocument:
    value: Any  # the document as JSON-shaped values: dicts, lists, str, float, bool, None
    index: int  # 0-based position among the file's documents
    offset: int  # character offset in the text where it starts
    line: int  # 1-based


def load_documents(text: str) -> list[YamlDocument]:
    """Every non-empty document of ``text``, parsed safely and bounded (size, count, depth, and aliases by
    :class:`wirespeed.yaml_input.BoundedLoader`'s expanded-node count), as
    JSON-shaped values (numbers as floats, as the engine hands rules; timestamps as the text written)."""
    import yaml

    from wirespeed.yaml_input import BoundedLoader, YamlLimitError

    if len(text) > YAML_LIMIT:
        raise YamlError(f"YAML larger than {size_text(YAML_LIMIT)}; split it, one file per application")

    loader = BoundedLoader(text)
    documents: list[YamlDocument] = []
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if index >= MAX_DOCUMENTS:
                raise YamlError(f"more than {MAX_DOCUMENTS:,} YAML documents; split the file")
            if node is not None:
                value = _plain(loader.construct_document(node), 0)
                if value is not None:
                    mark = node.start_mark
                    documents.append(YamlDocument(value, index, mark.index, mark.line + 1))
            index += 1
    except YamlLimitError as exc:
        raise YamlError(f"line {exc.line}: {exc.reason}" if exc.line else exc.reason, exc.line or 0) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        raise YamlError(f"not YAML: {exc.problem or exc.context} at line {line}", line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"not YAML: {exc}") from None
    except RecursionError:
        raise YamlError("not readable: YAML nested deeper than Python's recursion limit") from None
    finally:
        loader.dispose()
    return documents


def _plain(value: Any, depth: int) -> Any:
    """A constructed YAML value as decoded JSON would be: every number a float (``jsonscan``'s rule), a timestamp
    as its ISO text, keys as strings."""
    if depth > MAX_DEPTH:
        raise YamlError(f"YAML nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        return {_key(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):  # !!binary: Kubernetes takes base64 text, which is what was written
        import base64

        return base64.b64encode(value).decode("ascii")
    return str(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    return str(key)


def objects(document: YamlDocument) -> Iterator[tuple[Any, str]]:
    """The Kubernetes objects a document holds, each with where it is (a ``kind: List`` holds several)."""
    value = document.value
    where = f"document {document.index + 1} (line {document.line})"
    if isinstance(value, dict) and value.get("kind") == "List" and isinstance(value.get("items"), list):
        for position, item in enumerate(value["items"]):
            yield item, f"{where} items[{position}]"
        return
    yield value, where


def object_name(obj: Any) -> str:
    """``namespace/name`` of an object (``name`` alone when it has no namespace)."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    name = metadata.get("name")
    namespace = metadata.get("namespace")
    name = name if isinstance(name, str) and name else "(unnamed)"
    return f"{namespace}/{name}" if isinstance(namespace, str) and namespace else name
