"""Pulumi's passphrase secrets provider, read-only: what lets `wirespeed check` see the values the engine sees.

With the passphrase, ``pulumi policy analyze`` decrypts a stack's secrets and the policies see the real values;
without it they see the string ``[secret]`` (pulumi/pulumi pkg/backend/secrets/providers.go, BlindingProvider /
``config.BlindingCrypter``). This module does the same for a ``pulumi stack export``:

- the stack's provider is ``deployment.secrets_providers`` = ``{"type": "passphrase", "state": {"salt": STATE}}``
  (sdk/go/common/apitype/core.go ``SecretsProvidersV1``; pkg/secrets/passphrase/manager.go
  ``localSecretsManagerState``);
- ``STATE`` is ``v1:<salt, base64>:v1:<nonce>:<ciphertext>``, the second half the word ``pulumi`` encrypted with
  the key, which proves a passphrase right or wrong (manager.go ``symmetricCrypterFromPhraseAndState``);
- the key is PBKDF2-HMAC-SHA256(passphrase, salt, 1,000,000 iterations, 32 bytes) and each value
  ``v1:<nonce, base64>:<ciphertext, base64>`` is AES-256-GCM with no additional data
  (sdk/go/common/resource/config/crypt.go ``NewSymmetricCrypterFromPassphrase``, ``symmetricCrypter.DecryptValue``);
- a secret's plaintext is the JSON text of its value (pkg/resource/stack/deployment.go ``SerializePropertyValue``).

The passphrase comes from ``PULUMI_CONFIG_PASSPHRASE`` (used when set, even empty) or else the file named by
``PULUMI_CONFIG_PASSPHRASE_FILE`` with surrounding white space trimmed (manager.go ``readPassphrase``).
Other providers (Pulumi Cloud, awskms, azurekeyvault, gcpkms, hashivault) need their service: their secrets
stay unreadable, as they are to the engine without its credentials.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wirespeed.errors import UserError

PASSPHRASE = "passphrase"  # pkg/secrets/passphrase/manager.go: Type
PASSPHRASE_ENV = "PULUMI_CONFIG_PASSPHRASE"
PASSPHRASE_FILE_ENV = "PULUMI_CONFIG_PASSPHRASE_FILE"
# sdk/go/common/resource/config/crypt.go: NewSymmetricCrypterFromPassphrase, SymmetricCrypterKeyBytes.
PBKDF2_ITERATIONS = 1_000_000
KEY_BYTES = 32
GCM_NONCE_BYTES = 12  # crypto/cipher NewGCM: the standard nonce size the Go side checks for
CHECK_PLAINTEXT = "pulumi"  # pkg/secrets/passphrase/manager.go: what the state's ciphertext must decrypt to


class SecretsError(UserError):
    """The stack's secrets cannot be read with what was given: a wrong passphrase or a malformed value."""


def passphrase_from_env(env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """The passphrase as Pulumi's CLI finds it, and where it came from (for messages); ``(None, "")`` when
    neither variable is set. The file is read by the caller's rules for hostile input (``read_file``)."""
    env = os.environ if env is None else env
    if PASSPHRASE_ENV in env:
        return env[PASSPHRASE_ENV], PASSPHRASE_ENV
    path = env.get(PASSPHRASE_FILE_ENV, "")
    if path:
        return None, path
    return None, ""


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SecretsError(f"{what}: {text[:40]!r} is not base64") from None


@dataclass
class Decrypter:
    """AES-256-GCM with the key derived from a passphrase and the stack's salt."""

    key: bytes

    def decrypt(self, value: str, what: str) -> str:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        parts = value.split(":")
        if len(parts) != 3 or parts[0] != "v1":
            raise SecretsError(f"{what}: not a passphrase-provider ciphertext (want v1:<nonce>:<ciphertext>)")
        nonce, ciphertext = _b64(parts[1], what), _b64(parts[2], what)
        if len(nonce) != GCM_NONCE_BYTES:
            raise SecretsError(f"{what}: nonce is {len(nonce)} bytes, want {GCM_NONCE_BYTES}")
        try:
            plain = AESGCM(self.key).decrypt(nonce, ciphertext, None)
        except InvalidTag:
            raise SecretsError(f"{what}: does not decrypt with this passphrase (authentication failed)") from None
        try:
            return plain.decode("utf-8")
        except UnicodeDecodeError:
            raise SecretsError(f"{what}: decrypts to bytes that are not UTF-8") from None


def decrypter_for(passphrase: str, state: str, source: str) -> Decrypter:
    """The decrypter for a passphrase stack whose ``state`` is ``v1:<salt>:v1:<nonce>:<ciphertext>``; a
    :class:`SecretsError` naming ``source`` (where the passphrase came from) when it is the wrong one."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

    version, _, rest = state.partition(":")
    salt_text, _, check = rest.partition(":")
    if version != "v1" or not check:
        raise SecretsError(
            "deployment.secrets_providers.state.salt: malformed (want v1:<salt>:v1:<nonce>:<ciphertext>)"
        )
    salt = _b64(salt_text, "deployment.secrets_providers.state.salt")
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, iterations=PBKDF2_ITERATIONS)
    decrypter = Decrypter(kdf.derive(passphrase.encode("utf-8")))
    try:
        ok = decrypter.decrypt(check, "deployment.secrets_providers.state.salt") == CHECK_PLAINTEXT
    except SecretsError:
        ok = False
    if not ok:
        raise SecretsError(f"incorrect passphrase: {source} does not unlock this stack's secrets")
    return decrypter


@dataclass
class StackSecrets:
    """The secrets of one document: its provider once seen, and the decrypter, made when a ciphertext is first read
    (deriving the key costs ~1 s, paid only by exports that hold secrets)."""

    passphrase: str | None = None
    source: str = ""  # where the passphrase came from, for messages
    provider: str | None = None  # deployment.secrets_providers.type
    state: str | None = None
    blinded: int = 0  # ciphertexts read as "[secret]" so far
    _decrypter: Decrypter | None = field(default=None, repr=False)

    def set_provider(self, value: Any) -> None:
        if not isinstance(value, dict):
            raise SecretsError("deployment.secrets_providers: expected an object")
        kind = value.get("type")
        if not isinstance(kind, str):
            raise SecretsError("deployment.secrets_providers.type: expected a string")
        self.provider = kind
        state = value.get("state")
        salt = state.get("salt") if isinstance(state, dict) else None
        if kind == PASSPHRASE:
            if not isinstance(salt, str):
                raise SecretsError("deployment.secrets_providers.state.salt: expected a string")
            self.state = salt

    def decrypt(self, ciphertext: str) -> str | None:
        """The plaintext (JSON text) of a secret, or None when this document's secrets cannot be read here."""
        if self.passphrase is None or self.provider != PASSPHRASE or self.state is None:
            self.blinded += 1
            return None
        if self._decrypter is None:
            self._decrypter = decrypter_for(self.passphrase, self.state, self.source)
        return self._decrypter.decrypt(ciphertext, "a secret value")

    def why_unreadable(self) -> str:
        """Why a secret reads as ``[secret]``, and what would let the check read it."""
        if self.provider is not None and self.provider != PASSPHRASE:
            return (
                f"the stack's secrets provider is {self.provider!r}, which needs its service; `wirespeed check` "
                f"decrypts only passphrase-provider secrets"
            )
        if self.passphrase is None:
            return f"set {PASSPHRASE_ENV} or {PASSPHRASE_FILE_ENV} so the check can decrypt it, as the engine does"
        return "the document does not say which secrets provider encrypted it (deployment.secrets_providers)"
