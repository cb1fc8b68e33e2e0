"""`wirespeed check` on passphrase-provider secrets: decrypted with the passphrase as the engine decrypts them, and
never passed silently without it (issue 17)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from clirun import WIRESPEED
from fixtures.rules.engine import fixture
from secret_exports import CLUSTER, PULUMI_PASSPHRASE, PULUMI_STATE, cluster_with_secret_ports, encrypted, export, state
from wirespeed.check import SecretsError, StackSecrets, check_text
from wirespeed.check.secrets import decrypter_for
from wirespeed.rules import resolve_config

PORTS_RULE = "aks-allocated-outbound-ports-default"


def test_pulumis_own_vector_unlocks_with_its_passphrase_and_only_with_it():
    # pulumi/pulumi pkg/secrets/passphrase/manager_test.go: this state, passphrase "password".
    decrypter = decrypter_for(PULUMI_PASSPHRASE, PULUMI_STATE, "PULUMI_CONFIG_PASSPHRASE")
    assert decrypter.decrypt(PULUMI_STATE.split(":", 2)[2], "check") == "pulumi"
    with pytest.raises(SecretsError, match="incorrect passphrase: PULUMI_CONFIG_PASSPHRASE does not unlock"):
        decrypter_for("password123", PULUMI_STATE, "PULUMI_CONFIG_PASSPHRASE")


def secret_zero_export(ports: Any = None, provider: str = "passphrase") -> str:
    cluster = cluster_with_secret_ports(encrypted(0) if ports is None else ports, fixture("aks_cluster"))
    return json.dumps(export([state(CLUSTER, "aks", cluster)], provider))


def plain_zero_export() -> str:
    return json.dumps(export([state(CLUSTER, "aks", cluster_with_secret_ports(0, fixture("aks_cluster")))]))


def run(text: str, passphrase: str | None = None, accept: bool = False) -> Any:
    config = resolve_config({"tuning-agent-present": "disabled"})
    secrets = StackSecrets(passphrase=passphrase, source="PULUMI_CONFIG_PASSPHRASE")
    return check_text(text, "export.json", config, secrets=secrets, accept_unchecked_secrets=accept)


def test_with_the_passphrase_a_secret_zero_fails_exactly_as_a_plain_zero():
    found = run(secret_zero_export(), PULUMI_PASSPHRASE)
    plain = run(plain_zero_export())
    assert [(v.rule_id, v.enforcement, v.message) for v in found.violations] == [
        (v.rule_id, v.enforcement, v.message) for v in plain.violations
    ]
    assert [v.rule_id for v in found.violations] == [PORTS_RULE]
    assert found.blocked
    assert not found.unchecked


def test_a_secret_the_check_can_read_and_that_is_fine_passes():
    assert not run(secret_zero_export(encrypted(4000.0)), PULUMI_PASSPHRASE).violations


def test_without_the_passphrase_the_rule_reports_it_could_not_check_and_the_gate_fails():
    report = run(secret_zero_export())
    rule_ids = {v.rule_id for v in report.unchecked}
    assert PORTS_RULE in rule_ids
    assert "aks-snat-ports-minimum" in rule_ids
    assert report.blocked
    (first,) = [v for v in report.unchecked if v.rule_id == PORTS_RULE]
    assert first.enforcement == "mandatory"
    assert (
        "could not be checked: networkProfile.loadBalancerProfile.allocatedOutboundPorts is a secret" in first.message
    )
    assert "set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE" in first.message
    assert "--accept-unchecked-secrets" in first.message


def test_accepting_unchecked_secrets_reports_them_as_advisory():
    report = run(secret_zero_export(), accept=True)
    assert report.unchecked
    assert not report.blocked
    assert {v.enforcement for v in report.unchecked} == {"advisory"}
    assert all("accepted with --accept-unchecked-secrets" in v.message for v in report.unchecked)


def test_another_provider_says_the_check_cannot_decrypt_it():
    report = run(secret_zero_export(provider="awskms"), PULUMI_PASSPHRASE)
    assert report.blocked
    assert "secrets provider is 'awskms', which needs its service" in report.unchecked[0].message


def test_a_wrong_passphrase_is_an_error_not_a_pass():
    with pytest.raises(SecretsError, match="incorrect passphrase"):
        run(secret_zero_export(), "not-the-passphrase")


def test_the_engines_blinded_string_is_unchecked_too():
    # What the engine hands policies without the passphrase, and what `pulumi preview --json` prints.
    report = run(secret_zero_export("[secret]"))
    assert PORTS_RULE in {v.rule_id for v in report.unchecked}
    assert report.blocked


def test_a_secret_in_a_stack_rules_outputs_is_reported_on_the_stack():
    cluster = fixture("aks_cluster")
    outputs = copy.deepcopy(cluster)
    outputs["networkProfile"]["loadBalancerProfile"]["managedOutboundIPs"]["count"] = encrypted(1)
    outputs["agentPoolProfiles"][0]["maxCount"] = 95  # 95 + 1 surge = 96 nodes x 4,000 ports > 1 IP x 64,000
    text = json.dumps(export([state(CLUSTER, "aks", cluster, outputs)]))
    unchecked = [v for v in run(text).unchecked if v.rule_id == "aks-snat-capacity"]
    assert [(v.resource_name, v.resource_type) for v in unchecked] == [("(stack)", "pulumi:pulumi:Stack")]
    # On the stack's own URN, where the engine puts a stack violation naming no resource of the stack
    # (tests/engine/test_engine_differential.py runs both); without a stack resource, the URN Pulumi gives the root
    # stack.
    assert [v.resource_urn for v in unchecked] == ["urn:pulumi:dev::wirespeed::pulumi:pulumi:Stack::wirespeed-dev"]
    stackless = json.loads(text)
    stackless["deployment"]["resources"] = stackless["deployment"]["resources"][1:]
    derived = [v for v in run(json.dumps(stackless)).unchecked if v.rule_id == "aks-snat-capacity"]
    assert [v.resource_urn for v in derived] == ["urn:pulumi:dev::wirespeed::pulumi:pulumi:Stack::wirespeed-dev"]
    # With the passphrase, 1 IP for 4,000 ports x 96 nodes is a real capacity violation.
    found = run(text, PULUMI_PASSPHRASE)
    assert [v.rule_id for v in found.violations] == ["aks-snat-capacity"]
    assert "1 managed outbound IP(s) x 64,000" in found.violations[0].message


# --- the CLI ------------------------------------------------------------------------------------------------------


def cli(tmp_path: Path, text: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    assert WIRESPEED
    path = tmp_path / "export.json"
    path.write_text(text)
    config = tmp_path / "config.json"  # the export has no tuning DaemonSet: only the SNAT rules are in question
    config.write_text(json.dumps({"tuning-agent-present": "disabled"}))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_CONFIG_PASSPHRASE")}
    return subprocess.run(
        [WIRESPEED, "check", str(path), "--config", str(config), "--format", "json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**clean, **env},
    )


def rules_of(out: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    return [(v["rule"], v["enforcement"]) for v in json.loads(out.stdout)["violations"]]


def test_cli_decrypts_with_the_passphrase_from_the_environment_or_its_file(tmp_path):
    text = secret_zero_export()
    out = cli(tmp_path, text, PULUMI_CONFIG_PASSPHRASE=PULUMI_PASSPHRASE)
    assert out.returncode == 1, out.stderr
    assert (PORTS_RULE, "mandatory") in rules_of(out)
    assert not any(v["unchecked"] for v in json.loads(out.stdout)["violations"])
    phrase = tmp_path / "phrase"
    phrase.write_text(f"  {PULUMI_PASSPHRASE}\n")  # trimmed, as Pulumi's CLI trims it
    by_file = cli(tmp_path, text, PULUMI_CONFIG_PASSPHRASE_FILE=str(phrase))
    assert (by_file.returncode, rules_of(by_file)) == (out.returncode, rules_of(out))


def test_cli_without_the_passphrase_fails_unless_unchecked_secrets_are_accepted(tmp_path):
    text = json.dumps(
        export([state(CLUSTER, "aks", cluster_with_secret_ports(encrypted(4000.0), fixture("aks_cluster")))])
    )
    out = cli(tmp_path, text)
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    assert report["unchecked"] >= 1
    assert not report["passed"]
    accepted = cli(tmp_path, text, "--accept-unchecked-secrets")
    assert accepted.returncode == 0, accepted.stdout
    assert json.loads(accepted.stdout)["unchecked"] == report["unchecked"]
    assert cli(tmp_path, text, PULUMI_CONFIG_PASSPHRASE=PULUMI_PASSPHRASE).returncode == 0


def test_cli_wrong_passphrase_exits_2_with_one_error_line(tmp_path):
    out = cli(tmp_path, secret_zero_export(), PULUMI_CONFIG_PASSPHRASE="wrong")
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("error: ")
    assert "incorrect passphrase: PULUMI_CONFIG_PASSPHRASE does not unlock" in line
    missing = cli(tmp_path, secret_zero_export(), PULUMI_CONFIG_PASSPHRASE_FILE=str(tmp_path / "absent"))
    assert missing.returncode == 2
    assert "PULUMI_CONFIG_PASSPHRASE_FILE" in missing.stderr


def sealed(plaintext: bytes) -> dict[str, str]:
    """A secret whose sealed plaintext is exactly ``plaintext`` (Pulumi seals JSON text; these are not)."""
    import base64

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from secret_exports import _key
    from wirespeed.values import SECRET_SIG, SIG_KEY

    nonce = os.urandom(12)
    body = AESGCM(_key()).encrypt(nonce, plaintext, None)
    return {
        SIG_KEY: SECRET_SIG,
        "ciphertext": f"v1:{base64.b64encode(nonce).decode()}:{base64.b64encode(body).decode()}",
    }


@pytest.mark.parametrize(
    ("secret", "words"),
    [
        pytest.param(sealed(b"not json{"), "its plaintext is not JSON", id="sealed-not-json"),
        pytest.param(sealed(b"[" * 100_000 + b"]" * 100_000), "nested past the parser's limit", id="sealed-deep"),
        pytest.param({"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "plaintext": "{"},
                     "its plaintext is not JSON", id="plaintext-not-json"),
        pytest.param({"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"},
                     "malformed, neither a plaintext nor a ciphertext string", id="neither"),
    ],
)  # fmt: skip
def test_a_secret_pulumi_would_not_write_is_an_error_not_an_unknown(secret, words):
    """Read as unknown, such a value made the rule not apply: a secret 0 passed. The engine refuses such a stack."""
    with pytest.raises(SecretsError, match=words):
        run(secret_zero_export(secret), PULUMI_PASSPHRASE)
