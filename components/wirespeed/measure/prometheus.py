"""A small, hostile-input-proof client of the Prometheus HTTP API (``/api/v1/query``), for `wirespeed size ...
--from-prometheus`.

Every call shares one total deadline (connect, send, wait and read included: the request runs in a worker thread
the caller stops waiting for), every answer is read with a size cap, and every way an answer can be wrong (no
server, a login page, a proxy's HTML, truncated or non-JSON bodies, a JSON document of another shape, a refused
query) becomes one :class:`PrometheusError` naming the URL and what came back. Credentials in the URL
(``https://user:pass@host``) are sent as HTTP basic auth and never printed.

The API's envelope, result types and sample encoding: prometheus.io/docs/prometheus/latest/querying/api/
("Format overview", "Expression query result formats": samples are ``[unix seconds, "value as a string"]``).
"""

from __future__ import annotations

import base64
import json
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from wirespeed.errors import UserError

# The answers wirespeed asks for are small (a handful of series, or one series' raw samples over the window: 7 days
# at a 15 s scrape is 40,320 samples, about 1.2 MB); 32 MiB is far above any of them and far below what would hurt.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
# A bearer token file is a few hundred bytes to a few KiB (a Kubernetes service account token is about 1 KiB).
MAX_TOKEN_BYTES = 16 * 1024
DEFAULT_TIMEOUT_S = 30.0
TIMEOUT_RANGE_S = (1.0, 600.0)
_CHUNK = 64 * 1024
# What an error message quotes of an answer that is not the API's.
_EXCERPT = 120


class PrometheusError(UserError):
    """Prometheus could not be asked, or its answer is not usable; the message names the URL and why."""


class Deadline:
    """One total time budget for every call of a command."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self._end - time.monotonic()


@dataclass(frozen=True)
class Sample:
    """One series of an answer: its labels and its samples as (unix seconds, value)."""

    labels: Mapping[str, str]
    points: tuple[tuple[float, float], ...]

    @property
    def value(self) -> float:
        """An instant vector's value (its only sample)."""
        return self.points[-1][1]

    @property
    def time(self) -> float:
        return self.points[-1][0]


@dataclass
class Prometheus:
    """A Prometheus server's HTTP API at ``url`` (its base URL: the one serving ``/api/v1/query``)."""

    url: str
    deadline: Deadline
    bearer_token: str | None = None
    flag: str = "--from-prometheus"
    max_bytes: int = MAX_RESPONSE_BYTES
    narrow: str = "--selector or --window"
    """What the user can narrow when an answer is too large (the command's own flags)."""
    queries: list[str] = field(default_factory=list)
    """Every PromQL expression asked, in order (the CLI prints them)."""

    def __post_init__(self) -> None:
        self._base, self._basic = _split_url(self.url, self.flag)

    @property
    def shown_url(self) -> str:
        """The URL without credentials: what messages, plans and stack files may carry."""
        return self._base

    def query(self, promql: str, at: float | None = None) -> tuple[str, list[Sample]]:
        """``(resultType, series)`` of an instant query evaluated at ``at`` (unix seconds; None: the server's now)."""
        self.queries.append(promql)
        form = {"query": promql}
        if at is not None:
            form["time"] = f"{at:.3f}"
        body = self._post("/api/v1/query", form)
        return _parse(body, self._where(promql))

    def _where(self, promql: str | None = None) -> str:
        return f"{self.flag} {self._base}" + (f" (query {promql})" if promql else "")

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "wirespeed"}
        if self.bearer_token is not None:
            headers["Authorization"] = f"Bearer {self.bearer_token}"
        elif self._basic is not None:
            headers["Authorization"] = f"Basic {self._basic}"
        return headers

    def _post(self, path: str, form: dict[str, str]) -> bytes:
        outcome: dict[str, Any] = {}
        worker = threading.Thread(
            target=self._fetch, args=(self._base + path, form, outcome), name="wirespeed-prometheus", daemon=True
        )
        remaining = self.deadline.remaining()
        if remaining <= 0:
            raise PrometheusError(f"{self._where()}: no answer within {self.deadline.seconds:g} s (--timeout)")
        worker.start()
        worker.join(remaining)
        if worker.is_alive():
            # The thread gives up on its own once its socket timeouts (the remaining budget) pass; nobody waits.
            raise PrometheusError(f"{self._where()}: no answer within {self.deadline.seconds:g} s (--timeout)")
        if "error" in outcome:
            raise outcome["error"]
        data: bytes = outcome["body"]
        return data

    def _fetch(self, url: str, form: dict[str, str], outcome: dict[str, Any]) -> None:
        try:
            outcome["body"] = self._request(url, form)
        except PrometheusError as exc:
            outcome["error"] = exc
        except Exception as exc:  # an unexpected failure still reaches the caller, as itself
            outcome["error"] = exc

    def _request(self, url: str, form: dict[str, str]) -> bytes:
        import urllib3

        remaining = max(self.deadline.remaining(), 0.001)
        pool = urllib3.PoolManager(timeout=urllib3.Timeout(connect=remaining, read=remaining), retries=False)
        try:
            response = pool.request(
                "POST",
                url,
                fields=form,
                encode_multipart=False,
                headers=self._headers(),
                preload_content=False,
                redirect=False,
            )
        except urllib3.exceptions.HTTPError as exc:
            raise PrometheusError(f"{self._where()}: cannot reach the server: {_reason(exc)}") from None
        try:
            body = self._read(response)
        except urllib3.exceptions.HTTPError as exc:
            raise PrometheusError(f"{self._where()}: the answer broke off: {_reason(exc)}") from None
        finally:
            response.release_conn()
            pool.clear()
        return self._check_status(response, body)

    def _read(self, response: Any) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.stream(_CHUNK, decode_content=True):
            size += len(chunk)
            if size > self.max_bytes:
                raise PrometheusError(
                    f"{self._where()}: the answer is larger than {self.max_bytes // (1024 * 1024)} MiB; narrow "
                    f"{self.narrow}"
                )
            if self.deadline.remaining() <= 0:
                raise PrometheusError(f"{self._where()}: no answer within {self.deadline.seconds:g} s (--timeout)")
            chunks.append(chunk)
        return b"".join(chunks)

    def _check_status(self, response: Any, body: bytes) -> bytes:
        status = int(response.status)
        kind = str(response.headers.get("Content-Type", "")).split(";")[0].strip().lower()
        if 300 <= status < 400:
            target = response.headers.get("Location", "?")
            raise PrometheusError(
                f"{self._where()}: answered HTTP {status}, a redirect to {target}: give the server's base URL itself"
            )
        if kind != "application/json":
            hint = "" if status < 400 else f"HTTP {status} "
            raise PrometheusError(
                f"{self._where()}: answered {hint}{kind or 'without a Content-Type'}, not the Prometheus HTTP API "
                f"(is it the server's base URL, the one serving /api/v1/query?): {_excerpt(body)}"
            )
        if status in (401, 403):
            raise PrometheusError(
                f"{self._where()}: answered HTTP {status}: the server wants credentials (--bearer-token-file, or "
                "user:password@ in the URL for basic auth)"
            )
        if status >= 400 and not _api_error(body):
            raise PrometheusError(f"{self._where()}: answered HTTP {status}: {_excerpt(body)}")
        return body


def _split_url(url: str, flag: str) -> tuple[str, str | None]:
    """The base URL without credentials, and the basic auth value its userinfo gives (or None)."""
    allowed = "an http:// or https:// URL of a Prometheus server, e.g. http://prometheus.monitoring:9090"
    try:
        parts = urlsplit(url.strip())
        hostname, port = parts.hostname, parts.port  # .port raises ValueError for a port out of range
    except ValueError:
        raise PrometheusError(f"{flag}: {_redacted(url)!r} is not allowed: {allowed}") from None
    if parts.scheme not in ("http", "https") or not hostname or parts.query or parts.fragment:
        raise PrometheusError(f"{flag}: {_redacted(url)!r} is not allowed: {allowed} (no query or fragment)")
    basic = None
    if parts.username is not None:
        pair = f"{parts.username}:{parts.password or ''}"
        basic = base64.b64encode(pair.encode()).decode()
    host = f"[{hostname}]" if ":" in hostname else hostname
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", "")), basic


def _redacted(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}***@{rest.rpartition('@')[2]}" if "@" in rest.split("/")[0] else url


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "reason", None)
    text = str(inner if isinstance(inner, BaseException) else exc)
    # urllib3 words a refused connection as "<HTTPConnection object at 0x...>: Failed to establish a new connection:
    # [Errno 111] Connection refused": keep what the socket said.
    text = text.rpartition(">: ")[2]
    return " ".join(text.split())[:300] or type(exc).__name__


def _excerpt(body: bytes) -> str:
    text = " ".join(body[: _EXCERPT * 4].decode("utf-8", "replace").split())
    return repr(text[:_EXCERPT] + ("..." if len(text) > _EXCERPT else ""))


def _api_error(body: bytes) -> bool:
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("status") == "error"


def _parse(body: bytes, where: str) -> tuple[str, list[Sample]]:
    """The envelope ``{"status": "success", "data": {"resultType": ..., "result": [...]}}``, checked all the way."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise PrometheusError(f"{where}: the answer is not JSON ({exc}): {_excerpt(body)}") from None
    if not isinstance(data, dict) or data.get("status") not in ("success", "error"):
        raise PrometheusError(f"{where}: the answer is not a Prometheus API response: {_excerpt(body)}")
    if data["status"] == "error":
        kind, message = data.get("errorType", "error"), data.get("error", "")
        raise PrometheusError(f"{where}: Prometheus refused the query: {kind}: {' '.join(str(message).split())[:300]}")
    payload = data.get("data")
    kind = payload.get("resultType") if isinstance(payload, dict) else None
    result = payload.get("result") if isinstance(payload, dict) else None
    if kind not in ("vector", "matrix") or not isinstance(result, list):
        raise PrometheusError(f"{where}: the answer is not a vector or matrix result: {_excerpt(body)}")
    try:
        return kind, [_series(item, kind) for item in result]
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        raise PrometheusError(f"{where}: a series in the answer is malformed: {_excerpt(body)}") from None


def _series(item: Any, kind: str) -> Sample:
    labels = item["metric"]
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise ValueError("labels")
    raw = [item["value"]] if kind == "vector" else item["values"]
    points = tuple(_point(p) for p in raw)
    if not points:
        raise ValueError("no samples")
    return Sample(labels, points)


def _point(pair: Any) -> tuple[float, float]:
    stamp, text = pair
    if isinstance(stamp, bool) or not isinstance(stamp, int | float) or not isinstance(text, str):
        raise ValueError("sample")
    value = float(text)  # "NaN", "+Inf" parse; callers refuse them where a count is expected
    if not math.isfinite(stamp):
        raise ValueError("timestamp")
    return float(stamp), value
