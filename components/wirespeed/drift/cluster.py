"""Reading Nodes and tuning ConfigMaps from a cluster with the official ``kubernetes`` client.

Kubeconfig conventions are the client's own (``$KUBECONFIG``, ``~/.kube/config``, contexts, exec credential
plugins such as ``kubelogin`` or ``aws eks get-token``). The client is imported here only, and this module only by
`wirespeed drift`, so other commands never pay for it. Lists are paginated (``limit``/``continue``) and decoded
from the raw JSON: building the client's model objects for thousands of Nodes costs more than judging them
(bench/drift/RESULTS.md).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wirespeed.drift.judge import CONDITION_TYPE, SNAT_CONDITION_TYPE, NodeFacts
from wirespeed.drift.profiles import CONFIG_MAP_SELECTOR
from wirespeed.errors import UserError
from wirespeed.install_hint import install_extra

PAGE_SIZE = 500  # kubectl's default chunk size (--chunk-size=500)
# wirespeed's choice: 5,000,000 objects, 1,000 times the largest cluster Kubernetes supports (5,000 nodes,
# kubernetes.io/docs/setup/best-practices/cluster-large): a server that keeps handing out new continue tokens
# is stopped here even within the deadline.
MAX_PAGES = 10_000
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0


class KubeconfigError(UserError):
    """The kubeconfig cannot be used (missing, malformed, unknown context, failing credential plugin)."""


class KubernetesClientMissingError(UserError):
    """The optional kubernetes client is not installed."""


class ClusterUnreachableError(UserError):
    """The API server did not answer, or refused to answer (authentication, RBAC)."""


@dataclass(frozen=True)
class Target:
    """Where the user pointed us: for messages that name the flags they gave."""

    kubeconfig: Path | None
    context: str | None

    def describe(self) -> str:
        if self.kubeconfig is not None:
            where = f"--kubeconfig {self.kubeconfig}"
        else:
            where = f"--kubeconfig (default {os.environ.get('KUBECONFIG', '~/.kube/config')})"
        return where + (f" --context {self.context}" if self.context is not None else "")


def kubeconfig_files(target: Target) -> list[Path]:
    """The files the client will read, as it finds them: ``--kubeconfig`` or ``$KUBECONFIG`` (a ``:``-separated
    list, files that do not exist skipped) or ``~/.kube/config`` (kubernetes.config.kube_config KubeConfigMerger)."""
    paths = str(target.kubeconfig) if target.kubeconfig is not None else os.environ.get("KUBECONFIG", "~/.kube/config")
    found = []
    for part in paths.split(":"):
        path = Path(part).expanduser() if part else None
        if path is not None and os.path.lexists(path):
            found.append(path)
    return found


def check_kubeconfig_files(target: Target) -> None:
    """Refuse a kubeconfig that is not a regular file, is larger than the cap or is YAML past wirespeed's bounds
    (wirespeed.yaml_input), before the client opens it: it would block on a FIFO with no writer (until the
    deadline, then blame the cluster), read a device without end, and expand a "billion laughs" of aliases (an
    exec plugin's args, say) until the deadline. The client then reads the file again, a document now known to be
    within the bounds."""
    from wirespeed.io_limits import KUBECONFIG_LIMIT, InputFileError
    from wirespeed.yaml_input import read_yaml

    for path in kubeconfig_files(target):
        try:
            read_yaml(path, KUBECONFIG_LIMIT, str(path), "kubeconfig file")
        except InputFileError as exc:
            raise KubeconfigError(f"{target.describe()}: not a usable kubeconfig: {exc}") from None


def connect(target: Target) -> Any:
    """An ``ApiClient`` for the target; :class:`KubeconfigError` when the kubeconfig cannot be used."""
    import yaml

    check_kubeconfig_files(target)

    try:
        from kubernetes import client, config
    except ImportError as exc:
        raise KubernetesClientMissingError(
            f"{target.describe()}: wirespeed drift needs the kubernetes client: add it with {install_extra('drift')}"
        ) from exc

    configuration = client.Configuration()
    # The client reports a failing exec credential plugin with logging.error and carries on anonymously, which
    # would surface later as a puzzling 403 for system:anonymous: collect those records and fail here instead.
    plugin_errors = _ErrorRecords()
    root = logging.getLogger()
    root.addHandler(plugin_errors)
    try:
        config.load_kube_config(  # type: ignore[no-untyped-call]  # the client ships no annotations
            config_file=None if target.kubeconfig is None else str(target.kubeconfig),
            context=target.context,
            client_configuration=configuration,
            persist_config=False,
        )
    # The client validates a kubeconfig only by using it: a document of the wrong shape surfaces as whatever its
    # dict walks hit (TypeError, AttributeError, KeyError...). Only this call is guarded, so a bug elsewhere
    # still shows as a traceback. A failing exec credential plugin raises ConfigException.
    except (
        config.ConfigException,
        yaml.YAMLError,
        OSError,
        ValueError,
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
        RecursionError,  # a document nested deeper than the YAML parser's recursion
    ) as exc:
        raise KubeconfigError(f"{target.describe()}: not a usable kubeconfig: {_first_line(exc)}") from exc
    finally:
        root.removeHandler(plugin_errors)
    if plugin_errors.messages:
        message = _first_line(Exception(plugin_errors.messages[0]))
        raise KubeconfigError(f"{target.describe()}: the credential plugin failed: {message}")
    # One attempt per request: an unreachable cluster answers "exit 2" in seconds, not after urllib3's retries.
    configuration.retries = 0
    return client.ApiClient(configuration)


class _ErrorRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _get_pages(api: Any, target: Target, path: str, query: dict[str, str]) -> Iterator[dict[str, Any]]:
    """Every item of a list, page by page."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    token = ""
    seen: set[str] = set()
    while True:
        params = [("limit", str(PAGE_SIZE)), *query.items()] + ([("continue", token)] if token else [])
        try:
            # The client's own serialiser adds the server, TLS and credentials (exec plugins included).
            method, url, headers, body, post = api.param_serialize(
                "GET", path, query_params=params, header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )  # fmt: skip
            response = api.call_api(method, url, headers, body, post, (CONNECT_TIMEOUT_S, READ_TIMEOUT_S))
            data = _read_page(response, f"{target.describe()}: GET {path}")
        except ApiException as exc:  # the client wraps TLS failures (status 0)
            raise ClusterUnreachableError(f"{target.describe()}: {path}: {_first_line(exc)}") from exc
        except (HTTPError, OSError) as exc:
            host = api.configuration.host
            raise ClusterUnreachableError(
                f"{target.describe()}: cannot reach the cluster at {host}: {_cause(exc)}"
            ) from exc
        if response.status != 200:
            raise ClusterUnreachableError(
                f"{target.describe()}: GET {path}: {response.status} {_api_reason(data, response.reason)}"
            )
        items, token = _page(data, f"{target.describe()}: GET {path}")
        yield from items
        if not token:
            return
        if token in seen or len(seen) >= MAX_PAGES:
            why = "repeated a continue token" if token in seen else f"sent more than {MAX_PAGES:,} pages"
            raise ClusterUnreachableError(f"{target.describe()}: GET {path}: the server {why}; not a usable list")
        seen.add(token)


def _read_page(response: Any, where: str) -> bytes:
    """The body of one list response, at most :data:`~wirespeed.io_limits.API_PAGE_LIMIT` bytes (the deadline
    bounds a slow body; this bounds a fast one)."""
    from wirespeed.io_limits import API_PAGE_LIMIT, read_body, size_text

    # urllib3's response, not yet read (the client asks for preload_content=False)
    data = read_body(response.response, API_PAGE_LIMIT)
    if data is None:
        raise ClusterUnreachableError(
            f"{where}: the answer is larger than the {size_text(API_PAGE_LIMIT)} a page of {PAGE_SIZE:,} "
            "objects may be; not a usable list"
        )
    return data


def _page(data: bytes, where: str) -> tuple[list[dict[str, Any]], str]:
    """A list response's objects and continue token; :class:`ClusterUnreachableError` for anything that is not
    a Kubernetes list (an HTML page from a proxy, items that are not objects, nesting past the parser's limit)."""
    try:
        page = json.loads(data)
    except (ValueError, RecursionError):
        start = data[:40].decode("utf-8", "replace")
        raise ClusterUnreachableError(f"{where}: the answer is not JSON (it starts {start!r})") from None
    if not isinstance(page, dict):
        raise ClusterUnreachableError(f"{where}: the answer is not a Kubernetes list (a JSON {type(page).__name__})")
    items = page.get("items") or []
    metadata = page.get("metadata") or {}
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ClusterUnreachableError(f"{where}: the answer's items are not a list of objects")
    token = metadata.get("continue") if isinstance(metadata, dict) else None
    if token is not None and not isinstance(token, str):
        raise ClusterUnreachableError(f"{where}: the answer's metadata.continue is not a string")
    return items, token or ""


def _api_reason(body: bytes, reason: object) -> str:
    """The Status message the API server sent (``nodes is forbidden: User ...``), else the HTTP reason."""
    try:
        message = json.loads(body).get("message")
    except (TypeError, ValueError, AttributeError):
        message = None
    return _first_line(Exception(message or reason))


def _cause(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)  # urllib3's MaxRetryError carries the socket error as .reason
    return _first_line(reason if isinstance(reason, BaseException) else exc)


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class NodeUnreadableError(ValueError):
    """A Node whose metadata is not what the API defines: its profile label and report cannot be read."""


def _strings(meta: dict[str, Any], field: str) -> dict[str, str]:
    """Labels or annotations as the API defines them (string to string), absent meaning none. Anything else is
    :class:`NodeUnreadableError`: a node whose labels cannot be read cannot be told apart from one wirespeed does
    not manage, and counting it as unmanaged would pass a node drift never judged."""
    value = meta.get(field)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise NodeUnreadableError(f"metadata.{field} is a JSON {type(value).__name__}, not an object")
    for key, text in value.items():
        if not isinstance(text, str):
            raise NodeUnreadableError(f"metadata.{field}[{key!r}] is a JSON {type(text).__name__}, not a string")
    return dict(value)


def node_facts(item: dict[str, Any]) -> NodeFacts:
    """One Node as the judge reads it. A hostile or broken server may send any JSON: metadata, labels and
    annotations of another type than the API defines are :class:`NodeUnreadableError`; conditions of another type
    count as absent (the report in the annotation is what is judged)."""
    metadata = item.get("metadata")
    if not isinstance(metadata, dict):
        raise NodeUnreadableError(f"metadata is a JSON {type(metadata).__name__}, not an object")
    meta: dict[str, Any] = metadata
    conditions = _object(item.get("status")).get("conditions")
    listed = conditions if isinstance(conditions, list) else []
    by_type = {c["type"]: c for c in listed if isinstance(c, dict) and isinstance(c.get("type"), str)}
    return NodeFacts(
        name=str(meta.get("name", "")),
        labels=_strings(meta, "labels"),
        annotations=_strings(meta, "annotations"),
        condition=by_type.get(CONDITION_TYPE),
        snat_condition=by_type.get(SNAT_CONDITION_TYPE),
    )


def list_nodes(api: Any, target: Target, selector: str | None) -> Iterator[NodeFacts]:
    query = {"labelSelector": selector} if selector else {}
    for item in _get_pages(api, target, "/api/v1/nodes", query):
        try:
            yield node_facts(item)
        except NodeUnreadableError as exc:
            name = _object(item.get("metadata")).get("name")
            which = f"Node {name!r}" if isinstance(name, str) else "a Node"
            raise ClusterUnreachableError(
                f"{target.describe()}: GET /api/v1/nodes: {which}: {exc}; not a Kubernetes Node, nothing was judged"
            ) from None


def list_profile_config_maps(api: Any, target: Target) -> list[dict[str, Any]]:
    """The tuning ConfigMaps of every namespace (an install may use any namespace)."""
    return list(_get_pages(api, target, "/api/v1/configmaps", {"labelSelector": CONFIG_MAP_SELECTOR}))
