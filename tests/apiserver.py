"""A real Kubernetes API server for the tests: etcd plus kube-apiserver, on 127.0.0.1, torn down afterwards.

kube-apiserver is built from k8s.io/kubernetes at the version builders/apiserver/kube/go.mod pins
(builders/apiserver/build.sh; `make test` builds it); etcd is Debian's etcd-server. Each run generates its own CA,
serving certificate and ServiceAccount signing key (openssl), so nothing secret is committed.

What is on: RBAC and the Node authorizer (``--authorization-mode=Node,RBAC``), the default admission plugins
(PodSecurity, ServiceAccount, Priority, ...), ServiceAccount tokens through TokenRequest. Clients authenticate
with bearer tokens: the admin with a static token in group ``system:masters``, anything else with a real
ServiceAccount token from :meth:`ApiServer.service_account_token`, so it gets exactly that account's RBAC.

What is not there: no controller-manager (no ``default`` ServiceAccount, no garbage collection, no DaemonSet
pods), no scheduler, no kubelet (tests create Node objects themselves).

Run by hand (for the Go tests or a shell): ``python tests/apiserver.py`` prints the admin kubeconfig path and
serves until interrupted.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BUILD_SCRIPT = ROOT / "builders" / "apiserver" / "build.sh"
KUBE_APISERVER = ROOT / "builders" / "apiserver" / "bin" / "kube-apiserver"
KUBECTL = ROOT / "builders" / "apiserver" / "bin" / "kubectl"  # same release, built beside it
ADMIN_TOKEN_USER = "wirespeed-test-admin"
READY_TIMEOUT_S = 120.0  # a cold start on a loaded 2-core machine; measured start-to-ready in bench/apiserver


class PrerequisiteMissingError(Exception):
    """A prerequisite is missing: the message says which and how to get it."""


def missing_prerequisite() -> str | None:
    """Why the fixture cannot start here, or None."""
    problems = []
    if shutil.which("etcd") is None:
        problems.append("etcd (Debian package etcd-server: scripts/install-system-deps.sh)")
    for binary in (KUBE_APISERVER, KUBECTL):
        if not binary.exists():
            problems.append(f"{binary.relative_to(ROOT)} (build it: {BUILD_SCRIPT.relative_to(ROOT)})")
    if shutil.which("openssl") is None:
        problems.append("openssl (Debian package openssl)")
    if not problems:
        return None
    return "the real API server needs " + ", ".join(problems)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def generate_certificates(directory: Path) -> None:
    """ca.{crt,key}, serving.{crt,key} for 127.0.0.1/localhost, sa.{key,pub} for ServiceAccount tokens."""
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
             "-subj", "/CN=wirespeed-test-ca", "-keyout", "ca.key", "-out", "ca.crt", cwd=directory)  # fmt: skip
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-subj", "/CN=kube-apiserver", "-keyout", "serving.key", "-out", "serving.csr", cwd=directory)  # fmt: skip
    (directory / "serving.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n"
    )
    _openssl("x509", "-req", "-in", "serving.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-extfile", "serving.ext", "-out", "serving.crt", cwd=directory)  # fmt: skip
    _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key", cwd=directory)
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=directory)


def kubeconfig(server: str, ca_pem: bytes, user: str, token: str, context: str = "wirespeed-test") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": context,
                "cluster": {"server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()},
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": user}}],
        "current-context": context,
    }


@dataclass
class ApiServer:
    """A running etcd + kube-apiserver pair in ``workdir``."""

    workdir: Path
    port: int
    etcd_port: int
    etcd_peer_port: int
    admin_token: str
    etcd: subprocess.Popen[bytes] | None = None
    apiserver: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        return (self.workdir / "ca.crt").read_bytes()

    @property
    def admin_kubeconfig(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    def write_kubeconfig(self, path: Path, user: str, token: str) -> Path:
        path.write_text(json.dumps(kubeconfig(self.url, self.ca_pem, user, token), indent=2))
        path.chmod(0o600)
        return path

    # --- processes ------------------------------------------------------------------------------------------

    def start_etcd(self) -> None:
        client = f"http://127.0.0.1:{self.etcd_port}"
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        self.etcd = subprocess.Popen(
            [
                "etcd",
                "--name=wirespeed-test",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=wirespeed-test={peer}",
                "--log-level=warn",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.workdir / "etcd.log").open("ab"),
        )

    def start_apiserver(self) -> None:
        d = self.workdir
        self.apiserver = subprocess.Popen(
            [
                str(KUBE_APISERVER),
                f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--cert-dir={d / 'certs'}",
                f"--tls-cert-file={d / 'serving.crt'}",
                f"--tls-private-key-file={d / 'serving.key'}",
                f"--token-auth-file={d / 'tokens.csv'}",
                "--authorization-mode=Node,RBAC",
                # PodSecurity, ServiceAccount and Priority are in the default set; named so a change of defaults
                # cannot silently turn off what the tests prove.
                "--enable-admission-plugins=PodSecurity,ServiceAccount,Priority,NodeRestriction",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={d / 'sa.pub'}",
                f"--service-account-signing-key-file={d / 'sa.key'}",
                "--service-cluster-ip-range=10.96.0.0/16",
                # Only an API server, no Service network: the default reconciler would keep failing to write
                # a loopback endpoint for the kubernetes Service.
                "--endpoint-reconciler-type=none",
                "--v=0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(d / "kube-apiserver.log").open("ab"),
        )

    def _get(self, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
        context = ssl.create_default_context(cafile=str(self.workdir / "ca.crt"))
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.admin_token}"})
        try:
            with urllib.request.urlopen(request, context=context, timeout=timeout) as response:
                return int(response.status), bytes(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> float:
        """Seconds until /readyz answered ok (every post-start hook done: RBAC bootstrap, priority classes)."""
        start = time.monotonic()
        last = "no answer"
        while time.monotonic() - start < timeout:
            for proc, name in ((self.etcd, "etcd"), (self.apiserver, "kube-apiserver")):
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with {proc.returncode}: {self._log_tail(name)}")
            try:
                status, body = self._get("/readyz")
                if status == 200:
                    return time.monotonic() - start
                last = f"{status} {body[-300:]!r}"
            except (OSError, ssl.SSLError) as exc:
                last = str(exc)
            time.sleep(0.1)
        raise RuntimeError(
            f"kube-apiserver not ready after {timeout:.0f} s: {last}; {self._log_tail('kube-apiserver')}"
        )

    def _log_tail(self, name: str) -> str:
        log = self.workdir / f"{name}.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"

    @staticmethod
    def _stop(proc: subprocess.Popen[bytes] | None) -> None:
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def stop_apiserver(self) -> None:
        self._stop(self.apiserver)
        self.apiserver = None

    def restart_apiserver(self) -> float:
        """Stop and start kube-apiserver on the same port and data; returns seconds until ready again."""
        self.stop_apiserver()
        self.start_apiserver()
        return self.wait_ready()

    def stop(self) -> None:
        self._stop(self.apiserver)
        self._stop(self.etcd)
        self.apiserver = self.etcd = None

    # --- objects the tests need -------------------------------------------------------------------------

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(
            [str(KUBECTL), f"--kubeconfig={self.admin_kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and out.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed ({out.returncode}): {out.stderr}")
        return out

    def apply(self, manifests: str, field_manager: str = "wirespeed-test") -> subprocess.CompletedProcess[str]:
        """Server-side apply, as `kubectl apply --server-side` does it; the result keeps stderr (warnings).

        ``--force-conflicts``: the tests install the manifests once per namespace into this one cluster, and the
        cluster-scoped ClusterRole and ClusterRoleBinding (one name per cluster) are shared by those installs, so
        the latest install takes them over, as a second `kubectl apply` from another manager would have to.
        """
        return self.kubectl(
            "apply",
            "--server-side",
            "--force-conflicts",
            f"--field-manager={field_manager}",
            "-f",
            "-",
            stdin=manifests,
        )

    def ensure_default_service_account(self, namespace: str) -> None:
        """What the controller-manager would do: Pods are refused in a namespace without it."""
        self.kubectl("create", "serviceaccount", "default", f"--namespace={namespace}", check=False)

    def service_account_token(self, namespace: str, name: str, seconds: int = 3600) -> str:
        """A real token for the ServiceAccount (TokenRequest): its holder gets exactly that account's RBAC."""
        out = self.kubectl("create", "token", name, f"--namespace={namespace}", f"--duration={seconds}s")
        return out.stdout.strip()

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        token: str | None = None,
        content_type: str = "application/json",
    ) -> tuple[int, dict[str, object]]:
        """One request straight to the API (kubectl would GET first, or retry), as ``token``'s holder (default: the
        admin): the HTTP status and the decoded JSON answer (an object, or a Status when refused)."""
        request = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {token or self.admin_token}", "Content-Type": content_type},
        )
        context = ssl.create_default_context(cafile=str(self.workdir / "ca.crt"))
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as response:
                return int(response.status), json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def create_many(self, path: str, body_of: Callable[[int], object], count: int, workers: int = 8) -> float:
        """POST ``count`` objects, ``body_of(i)`` each, to ``path`` with ``workers`` requests in flight (a fleet's
        worth of Nodes in seconds, not one at a time); the seconds it took. Any refusal stops it, naming the object."""

        def post(i: int) -> None:
            status, answer = self.request("POST", path, body_of(i))
            if status != 201:
                raise RuntimeError(f"POST {path} #{i}: HTTP {status}: {answer.get('message')}")

        start = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(post, range(count)))
        return time.perf_counter() - start

    def token_request(self, namespace: str, name: str, pod: str | None = None, seconds: int = 3600) -> str:
        """A token for the ServiceAccount from the TokenRequest API, bound to ``pod`` when given, as the kubelet
        requests the token it mounts into a pod: the API server then puts the pod's node into the token's claims,
        and hands it to admission as userInfo.extra["authentication.kubernetes.io/node-name"]."""
        spec: dict[str, object] = {"expirationSeconds": seconds}
        if pod is not None:
            spec["boundObjectRef"] = {"apiVersion": "v1", "kind": "Pod", "name": pod}
        status, answer = self.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
        )
        if status != 201:
            raise RuntimeError(f"TokenRequest for {namespace}/{name} (pod {pod}) failed ({status}): {answer}")
        token_status = answer["status"]
        assert isinstance(token_status, dict)
        return str(token_status["token"])


# The collections StandInControllers looks after: every kind NodeTuning creates (wirespeed.manifests).
CLUSTER_COLLECTIONS = (
    "/api/v1/namespaces",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
)
NAMESPACED_COLLECTIONS = (
    "/api/v1/serviceaccounts",
    "/api/v1/configmaps",
    "/api/v1/pods",
    "/apis/apps/v1/daemonsets",
    "/apis/rbac.authorization.k8s.io/v1/roles",
    "/apis/rbac.authorization.k8s.io/v1/rolebindings",
)
FOREGROUND = "foregroundDeletion"  # the finalizer a foreground (cascading) delete sets; the garbage collector's


class StandInControllers:
    """What kube-controller-manager would do for the objects a Pulumi program creates here, which the kubernetes
    provider waits for (there is no controller-manager: the module docstring). A thread, until :meth:`stop`:

    - the DaemonSet controller's status for a DaemonSet no node runs: ``observedGeneration`` is the generation and
      every count 0 (the provider's await, kstatus, counts a DaemonSet done once its controller has observed its
      generation and the counts agree). So only while no Node matches its selector is this what the controller would
      write; the tests run the provider only then.
    - the garbage collector's part of a foreground delete (the provider's default propagation): once an object
      marked for deletion has no dependents (nothing here has owner references) it drops the ``foregroundDeletion``
      finalizer, and the API server removes the object.
    - the namespace controller's last step: a Terminating namespace with nothing left in it (of the kinds above) is
      finalized. It deletes nothing itself, so an object the program failed to delete keeps its namespace, and a
      test listing the API server sees both.
    """

    def __init__(self, server: ApiServer, interval_s: float = 0.2) -> None:
        self.server = server
        self.interval_s = interval_s
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="stand-in-controllers", daemon=True)

    def start(self) -> StandInControllers:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.reconcile()
            except (OSError, RuntimeError, KeyError, ValueError) as exc:  # the next round retries; a test reads errors
                self.errors.append(str(exc))

    def _items(self, collection: str) -> list[dict[str, Any]]:
        status, answer = self.server.request("GET", collection)
        if status != 200:
            raise RuntimeError(f"GET {collection}: {status} {answer}")
        items: list[dict[str, Any]] = answer.get("items") or []  # type: ignore[assignment]
        return items

    @staticmethod
    def _path(collection: str, meta: dict[str, Any]) -> str:
        if "namespace" not in meta:
            return f"{collection}/{meta['name']}"
        group, resource = collection.rsplit("/", 1)
        return f"{group}/namespaces/{meta['namespace']}/{resource}/{meta['name']}"

    def reconcile(self) -> None:
        """One round of all three."""
        namespaced: dict[str, list[dict[str, Any]]] = {c: self._items(c) for c in NAMESPACED_COLLECTIONS}
        for daemon_set in namespaced["/apis/apps/v1/daemonsets"]:
            self._observe(daemon_set)
        occupied = {o["metadata"]["namespace"] for items in namespaced.values() for o in items}
        for collection, items in [*namespaced.items(), *((c, self._items(c)) for c in CLUSTER_COLLECTIONS)]:
            for obj in (o for o in items if "deletionTimestamp" in o["metadata"]):
                meta = obj["metadata"]
                if FOREGROUND in meta.get("finalizers", []):
                    rest = [f for f in meta["finalizers"] if f != FOREGROUND]
                    self._patch(self._path(collection, meta), {"metadata": {"finalizers": rest}})
                elif collection == "/api/v1/namespaces" and meta["name"] not in occupied:
                    self._finalize(obj)

    def _observe(self, daemon_set: dict[str, Any]) -> None:
        meta = daemon_set["metadata"]
        if "deletionTimestamp" in meta or daemon_set.get("status", {}).get("observedGeneration") == meta["generation"]:
            return
        counts = ("currentNumberScheduled", "desiredNumberScheduled", "numberMisscheduled", "numberReady")
        status = {"observedGeneration": meta["generation"], **dict.fromkeys(counts, 0)}
        body = {"status": status}
        self._patch(self._path("/apis/apps/v1/daemonsets", meta) + "/status", body)

    def _patch(self, path: str, body: dict[str, Any]) -> None:
        status, answer = self.server.request("PATCH", path, body, content_type="application/merge-patch+json")
        if status not in (200, 404, 409):  # gone, or changed meanwhile: the next round sees it again
            raise RuntimeError(f"PATCH {path}: {status} {answer}")

    def _finalize(self, namespace: dict[str, Any]) -> None:
        body = {**namespace, "spec": {**namespace.get("spec", {}), "finalizers": []}}
        name = namespace["metadata"]["name"]
        status, answer = self.server.request("PUT", f"/api/v1/namespaces/{name}/finalize", body)
        if status not in (200, 404, 409):
            raise RuntimeError(f"finalize namespace {name}: {status} {answer}")


@contextmanager
def stand_in_controllers(server: ApiServer) -> Iterator[StandInControllers]:
    """:class:`StandInControllers` running for the block."""
    controllers = StandInControllers(server).start()
    try:
        yield controllers
    finally:
        controllers.stop()


@contextmanager
def running(workdir: Path | None = None) -> Iterator[ApiServer]:
    """Start etcd and kube-apiserver, yield when ready, always stop both. Raises :class:`PrerequisiteMissingError`."""
    reason = missing_prerequisite()
    if reason is not None:
        raise PrerequisiteMissingError(reason)
    with tempfile.TemporaryDirectory(prefix="wirespeed-apiserver-") as tmp:
        d = Path(workdir or tmp)
        d.mkdir(parents=True, exist_ok=True)
        generate_certificates(d)
        token = base64.urlsafe_b64encode(os.urandom(24)).decode().rstrip("=")
        (d / "tokens.csv").write_text(f'{token},{ADMIN_TOKEN_USER},{ADMIN_TOKEN_USER},"system:masters"\n')
        server = ApiServer(d, free_port(), free_port(), free_port(), token)
        server.write_kubeconfig(server.admin_kubeconfig, ADMIN_TOKEN_USER, token)
        try:
            server.start_etcd()
            server.start_apiserver()
            server.wait_ready()
            server.ensure_default_service_account("default")
            yield server
        finally:
            server.stop()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    """Serve until SIGINT or SIGTERM, then tear everything down (the temporary directory included)."""
    signal.signal(signal.SIGTERM, _interrupt)
    with running() as server:
        print(server.admin_kubeconfig, flush=True)
        with suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()
