"""`wirespeed audit aws` against endpoints that are not AWS: a local HTTP server answering an HTML error page, or
drip-feeding its answer. One ``error:`` line and exit 2, never a traceback or a hang (boto3 over real sockets;
the console script as users run it)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from clirun import WIRESPEED

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
