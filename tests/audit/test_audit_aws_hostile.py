# ruff: noqa: F811  (the moto fixture is imported from tests/moto_aws.py and taken as a parameter)
"""`wirespeed audit aws` against endpoints that are not AWS: a local HTTP server answering an HTML error page, or
drip-feeding its answer. One ``error:`` line and exit 2, never a traceback or a hang (boto3 over real sockets;
the console script as users run it)."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from clirun import WIRESPEED
from moto_aws import TUNED_USER_DATA, Account, Moto, moto  # noqa: F401

HTML = b"<html><head><title>503 Service Unavailable</title></head><body>proxy</body></html>"


@pytest.fixture(params=["html-200", "html-503", "drip"])
def endpoint(request) -> Iterator[tuple[str, str]]:
    mode = request.param

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(503 if mode == "html-503" else 200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(86_400 if mode == "drip" else len(HTML)))
            self.end_headers()
            if mode != "drip":
                self.wfile.write(HTML)
                return
            try:
                for _ in range(86_400):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                return

        do_GET = do_POST = _answer  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield mode, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_an_endpoint_that_is_not_aws_is_one_error_line(endpoint):
    mode, url = endpoint
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",  # a fake key for a fake endpoint
    }  # fmt: skip
    started = time.monotonic()
    out = subprocess.run(
        [WIRESPEED, "audit", "aws", "--endpoint-url", url, "--region", "eu-west-1", "--timeout", "4"],
        capture_output=True, text=True, env=env, timeout=90, check=False,
    )  # fmt: skip
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stdout + out.stderr
    assert out.stderr.startswith("error: audit aws: "), out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    if mode == "drip":
        assert "not read within --timeout 4 s" in out.stderr
    assert time.monotonic() - started < 60


def test_an_endless_fast_answer_stops_at_the_body_cap_not_the_timeout():
    """An endpoint streaming zeros as fast as loopback carries them (no drip: --timeout would not stop it before
    gigabytes were in memory): the first call's body stops at MAX_RESPONSE_BYTES, one error line naming the call."""
    from wirespeed.audit.aws_collect import MAX_RESPONSE_BYTES

    sent = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(1 << 40))
            self.end_headers()
            chunk = b"0" * (1 << 20)
            try:
                for _ in range(1 << 20):
                    self.wfile.write(chunk)
                    sent.append(len(chunk))
            except OSError:
                return

        do_GET = do_POST = _answer  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",  # a fake key for a fake endpoint
    }  # fmt: skip
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        out = subprocess.run(
            [WIRESPEED, "audit", "aws", "--endpoint-url", url, "--region", "eu-west-1", "--timeout", "600"],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr == (
        "error: audit aws: cannot reach AWS: eks:ListClusters answered more than 64 MiB (MAX_RESPONSE_BYTES), far "
        "past any AWS API response the audit reads; check --endpoint-url and any proxy\n"
    )
    assert MAX_RESPONSE_BYTES == 64 << 20
    # The server stopped soon after the cap: the client closed the connection instead of reading on (socket
    # buffers hold a few MiB more).
    assert sum(sent) < MAX_RESPONSE_BYTES + (64 << 20)


# --- One call at a time answered by something that is not AWS, the rest by moto ---------------------------------
# A proxy on 127.0.0.1 in front of moto's real server (tests/moto_aws.py) forwards every call but the one under test,
# which it answers itself: so each call the audit makes is reached with a real account behind the others, over real
# sockets, through the console script. The proxy names each call from the request alone (the SigV4 credential
# scope's service, then the protocol's own operation field), so what it saw is checked against the audit's calls.

# The SigV4 signing name of each service -> botocore's name for it (the audit's "service:Operation" words).
SIGNING_NAMES = {"ec2": "ec2", "eks": "eks", "monitoring": "cloudwatch", "servicequotas": "service-quotas"}
# EKS is REST: its operations are told apart by path (EKS API reference: ListClusters, ListNodegroups,
# DescribeNodegroup).
EKS_PATHS = (
    (re.compile(r"^/clusters$"), "ListClusters"),
    (re.compile(r"^/clusters/[^/]+/node-groups$"), "ListNodegroups"),
    (re.compile(r"^/clusters/[^/]+/node-groups/[^/]+$"), "DescribeNodegroup"),
)
# Every call a full audit of the account below makes, in the order it makes them (ListMetrics only because the
# proxy marks the gateway regional). Checked against what the proxy saw, so a call the audit adds is not left out.
AUDIT_CALLS = [
    "eks:ListClusters",
    "ec2:DescribeNatGateways",
    "cloudwatch:ListMetrics",
    "cloudwatch:GetMetricData",
    "ec2:DescribeLaunchTemplateVersions",
    "eks:ListNodegroups",
    "eks:DescribeNodegroup",
    "ec2:DescribeInstances",
    "ec2:DescribeAddresses",
    "service-quotas:GetServiceQuota",
]
# A captive portal's page, not well-formed XML (an unclosed <meta> and <br>): botocore's XML parser raises on it.
PORTAL = (
    b'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Sign in</title></head>'
    b"<body><p>Accept the terms to continue<br></body></html>"
)


def _operation(headers: Any, path: str, body: bytes) -> str:
    scope = re.search(r"Credential=[^/]+/\d{8}/[^/]+/([^/]+)/aws4_request", headers.get("Authorization", ""))
    assert scope, headers
    service = SIGNING_NAMES[scope.group(1)]
    target = headers.get("X-Amz-Target")
    if target:  # JSON protocol (Service Quotas; CloudWatch when botocore picks JSON)
        return f"{service}:{target.rsplit('.', 1)[1]}"
    if "/operation/" in path:  # Smithy RPC v2 CBOR (CloudWatch when botocore picks it)
        return f"{service}:{path.rsplit('/', 1)[1]}"
    if service in ("ec2", "cloudwatch"):  # the query protocols: Action in the form body
        return f"{service}:{urllib.parse.parse_qs(body.decode())['Action'][0]}"
    route = urllib.parse.urlsplit(path).path
    return next(f"{service}:{name}" for pattern, name in EKS_PATHS if pattern.match(route))


@dataclass
class Proxy:
    url: str
    seen: list[str]
    # The call answered by the proxy, and how: (operation, status, content type, body); None: forward every call.
    answer: tuple[str, int, str, bytes] | None = None


@pytest.fixture(scope="module")
def proxy(moto: Moto) -> Iterator[Proxy]:
    moto.reset()
    account = Account(moto)
    account.nat_gateway()
    account.node_group("prod", "network", ["c6in.8xlarge"], TUNED_USER_DATA)
    account.karpenter_instances("c6in.8xlarge", 1)
    upstream = urllib.parse.urlsplit(moto.url)
    state = Proxy("", [])

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            call = _operation(self.headers, self.path, body)
            state.seen.append(call)
            if state.answer is not None and state.answer[0] == call:
                _, status, content_type, out = state.answer
            else:
                connection = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=60)
                skip = {"connection", "content-length", "transfer-encoding"}
                connection.request(
                    self.command, self.path, body, {k: v for k, v in self.headers.items() if k.lower() not in skip}
                )
                reply = connection.getresponse()
                status, content_type, out = reply.status, reply.getheader("Content-Type", ""), reply.read()
                connection.close()
                if call == "ec2:DescribeNatGateways":
                    # moto 5.2.1 serves no AvailabilityMode: marked regional here, so the audit also calls
                    # ListMetrics (the member as EC2's XML spells it, botocore's model: availabilityMode).
                    out = re.sub(
                        rb"(<natGatewayId>[^<]+</natGatewayId>)",
                        rb"\1<availabilityMode>regional</availabilityMode>",
                        out,
                    )
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_POST = _answer  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _audit_through(proxy: Proxy, moto: Moto) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | moto.env()
    proxy.seen.clear()
    return subprocess.run(
        [WIRESPEED, "audit", "aws", "--endpoint-url", proxy.url, "--region", "eu-west-1", "--timeout", "60"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


def test_the_proxy_reaches_every_call_the_audit_makes(proxy, moto):
    proxy.answer = None
    out = _audit_through(proxy, moto)
    assert out.returncode in (0, 1), out.stderr  # findings or none: the audit ran to the end
    assert list(dict.fromkeys(proxy.seen)) == AUDIT_CALLS


@pytest.mark.parametrize("call", AUDIT_CALLS)
def test_an_html_page_for_any_call_is_one_error_line_naming_the_call_and_endpoint(proxy, moto, call):
    proxy.answer = (call, 200, "text/html; charset=utf-8", PORTAL)
    out = _audit_through(proxy, moto)
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr == (
        f"error: audit aws: cannot reach AWS: {call} at {proxy.url} answered an HTML page (HTTP 200), not an AWS API "
        "response; check --endpoint-url and any proxy\n"
    )
    assert proxy.seen[-1] == call  # nothing was called after the page: the audit stopped there


# Answers that are neither AWS's nor HTML, one per protocol the audit reads, with what botocore's parser says of them.
GARBAGE = [
    pytest.param("ec2:DescribeNatGateways", b"Service Unavailable", "ResponseParserError: Unable to parse response "
                 "(syntax error: line 1, column 0), invalid XML received. Further retries may succeed:", id="ec2-text"),
    pytest.param("eks:ListClusters", b"[]", "AttributeError: 'list' object has no attribute 'get'", id="eks-list"),
    pytest.param("cloudwatch:GetMetricData", b"\xff\xfe", "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in "
                 "position 0: invalid start byte", id="cloudwatch-not-utf8"),
    pytest.param("service-quotas:GetServiceQuota", b'{"Quota": "x"}', "AttributeError: 'str' object has no attribute "
                 "'get'", id="quotas-wrong-shape"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "body", "detail"), GARBAGE)
def test_an_answer_botocore_cannot_parse_is_one_error_line(proxy, moto, call, body, detail):
    proxy.answer = (call, 200, "application/octet-stream", body)
    out = _audit_through(proxy, moto)
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr == (
        f"error: audit aws: cannot reach AWS: {call} at {proxy.url} answered what botocore cannot parse ({detail}) "
        "(HTTP 200), not an AWS API response; check --endpoint-url and any proxy\n"
    )
