"""Stack exports whose values are passphrase-provider secrets, encrypted as Pulumi's CLI encrypts them.

The salt state and passphrase are Pulumi's own test vector (pulumi/pulumi pkg/secrets/passphrase/manager_test.go:
``state`` with passphrase ``"password"``), so the key is the one Pulumi derives; values are sealed the way
``symmetricCrypter.EncryptValue`` seals them (sdk/go/common/resource/config/crypt.go: AES-256-GCM, a random
12-byte nonce, ``v1:<nonce b64>:<ciphertext b64>``) with the value's JSON text as plaintext
(pkg/resource/stack/deployment.go ``SerializePropertyValue``).
"""

from __future__ import annotations

import base64
import functools
import json
import os
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from wirespeed.values import SECRET_SIG, SIG_KEY

PULUMI_STATE = "v1:fozI5u6B030=:v1:F+6ZduKKd8G0/V7L:PGMFeIzwobWRKmEAzUdaQHqC5mMRIQ=="
PULUMI_PASSPHRASE = "password"
STACK = "urn:pulumi:dev::wirespeed"
CLUSTER = "azure-native:containerservice:ManagedCluster"


@functools.cache
def _key() -> bytes:
    salt = base64.b64decode(PULUMI_STATE.split(":")[1])
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=1_000_000)
    return kdf.derive(PULUMI_PASSPHRASE.encode())


def encrypted(value: Any) -> dict[str, str]:
    """``value`` as a secret in a passphrase stack's export."""
    nonce = os.urandom(12)
    sealed = AESGCM(_key()).encrypt(nonce, json.dumps(value).encode(), None)
    ciphertext = f"v1:{base64.b64encode(nonce).decode()}:{base64.b64encode(sealed).decode()}"
    return {SIG_KEY: SECRET_SIG, "ciphertext": ciphertext}


def export(resources: list[dict[str, Any]], provider: str = "passphrase") -> dict[str, Any]:
    """A `pulumi stack export` document (deployment version 3) of ``resources`` under a stack resource."""
    state = {"salt": PULUMI_STATE} if provider == "passphrase" else {"url": "awskms://alias/x"}
    stack = {"urn": f"{STACK}::pulumi:pulumi:Stack::wirespeed-dev", "custom": False, "type": "pulumi:pulumi:Stack"}
    return {
        "version": 3,
        "deployment": {
            "manifest": {"time": "2026-01-01T00:00:00Z", "magic": "", "version": "v3.259.0"},
            "secrets_providers": {"type": provider, "state": state},
            "resources": [stack, *resources],
        },
    }


def state(type_token: str, name: str, inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "urn": f"{STACK}::{type_token}::{name}",
        "custom": True,
        "id": f"/subscriptions/s/resourceGroups/rg/providers/x/{name}",
        "type": type_token,
        "inputs": inputs,
        "outputs": inputs if outputs is None else outputs,
    }


def cluster_with_secret_ports(ports: Any, cluster: dict[str, Any]) -> dict[str, Any]:
    """``cluster`` (props) with allocatedOutboundPorts = ``ports`` (already a secret wrapper or a plain value)."""
    cluster["networkProfile"]["loadBalancerProfile"]["allocatedOutboundPorts"] = ports
    return cluster
