"""User errors vs bugs: only `wirespeed.errors.UserError` becomes a one-line exit 2; anything else stays a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from clirun import invoke
from wirespeed import catalog, profile, profiles
from wirespeed.errors import FieldError, UserError
from wirespeed.sizing import errors as sizing_errors


@pytest.mark.parametrize(
    "error_class",
    [
        sizing_errors.SizingError,
        sizing_errors.InfeasibleError,
        catalog.UnknownInstanceType,
        catalog.UnknownDriver,
        profile.ProfileError,
        profiles.UnknownProfile,
        FieldError,
    ],
    ids=lambda c: c.__name__,
)
def test_every_user_facing_library_error_is_a_user_error(error_class):
    assert issubclass(error_class, UserError)


@pytest.mark.parametrize(
    ("error", "names", "message"),
    [
        pytest.param(
            FieldError("outbound_ips", 101, "1..100"),
            {"outbound_ips": "--outbound-ips"},
            "--outbound-ips: 101 is not allowed: 1..100",
            id="label-replaced",
        ),
        pytest.param(
            catalog.UnknownDriver("mlx5", ["ena"]),
            {"driver": "--driver"},
            "--driver: unknown NIC driver 'mlx5': known drivers are ena",
            id="name-put-in-front",
        ),
        pytest.param(
            FieldError("outbound_ips", 101, "1..100"),
            {},
            "outbound_ips: 101 is not allowed: 1..100",
            id="unknown-to-the-caller",
        ),
        pytest.param(
            sizing_errors.InfeasibleError("flows: 9 required", required=9, available=1, suggestion="add IPs"),
            {"flows": "--flows"},
            "--flows: 9 required; add IPs",
            id="infeasible-label",
        ),
    ],
)
def test_message_for_speaks_the_callers_names(error, names, message):
    assert error.message_for(names) == message


def test_a_bug_surfaces_as_a_traceback_with_a_faulty_library_stub(monkeypatch):
    """A stand-in for a bug (none is known): a KeyError inside the library must not read as bad input."""
    from wirespeed.sizing import nat_gateway

    def faulty(flows: int, sku: str) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(nat_gateway, "plan_azure_nat_gateway", faulty)
    with pytest.raises(KeyError, match="a bug"):
        invoke("size", "azure-natgw", "--flows", "10")


def test_a_bug_in_a_fresh_process_exits_1_with_a_traceback_with_a_faulty_library_stub():
    code = (
        "import sys; from wirespeed.sizing import nat_gateway\n"
        "def faulty(flows, sku): raise KeyError('a bug')\n"
        "nat_gateway.plan_azure_nat_gateway = faulty\n"
        "from wirespeed.cli import main\n"
        "sys.argv = ['wirespeed', 'size', 'azure-natgw', '--flows', '10']\n"
        "main()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 1
    assert "Traceback" in out.stderr
    assert out.stderr.rstrip().endswith("KeyError: 'a bug'")


def test_version_prints_the_installed_distributions_version():
    from importlib.metadata import version

    from typer.testing import CliRunner

    from wirespeed.cli import app

    out = CliRunner().invoke(app, ["--version"])
    assert (out.exit_code, out.stdout) == (0, f"wirespeed {version('wirespeed')}\n")
