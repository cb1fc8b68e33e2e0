"""`wirespeed profile ...` through the real entry point: show, validate (every problem, each naming the file)."""

from __future__ import annotations

import json

import pytest

from clirun import invoke, wirespeed


def test_profile_show_and_validate(tmp_path):
    out = wirespeed("profile", "show", "throughput")
    assert out.returncode == 0, out.stderr
    profile = json.loads(out.stdout)
    assert profile["sysctls"]["net.core.netdev_max_backlog"] == 32_768
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "rings": {"ena": {"rx": 10}}}))
    out = wirespeed("profile", "validate", str(bad))
    assert out.returncode == 2
    assert out.stderr == f"error: {bad}/rings/ena/rx: 10 is not allowed: must be between 64 and 65,536\n"


def test_profile_show_unknown_name():
    out = invoke("profile", "show", "fast")
    assert (out.returncode, out.stderr) == (
        2,
        "error: profile: 'fast' is not a built-in profile: balanced, throughput\n",
    )


def test_profile_validate_lists_every_problem_one_line_each(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "rings": {"ena": {"rx": 10, "tx": 1e9}}}))
    out = invoke("profile", "validate", str(bad))
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"error: {bad}/rings/ena/rx: 10 is not allowed: must be between 64 and 65,536",
        f"error: {bad}/rings/ena/tx: 1000000000 is not allowed: must be between 64 and 65,536",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b"\xff\xfe{}", "{path}: byte 0 (0xff) is not UTF-8; give a UTF-8 JSON file", id="not-utf8"),
        pytest.param(
            b'{"name": "x"', "{path}/: not valid JSON: Expecting ',' delimiter at line 1 column 13", id="json"
        ),
        pytest.param(b"[1, 2]", "{path}/: must be a JSON object, got list", id="array"),
        pytest.param(
            b"1" * 5000,
            "{path}/: not valid JSON for a profile: Exceeds the limit (4300 digits) for "
            "integer string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to increase "
            "the limit",
            id="huge-int",
        ),
        pytest.param(b'{"name": "x", "a\\nb": 1}', "{path}/a\\nb: is not a known field", id="newline-key"),
    ],
)
def test_profile_validate_bad_file_exit_2_names_the_file(tmp_path, content, message):
    path = tmp_path / "p.json"
    path.write_bytes(content)
    out = invoke("profile", "validate", str(path))
    assert (out.returncode, out.stderr) == (2, "error: " + message.format(path=path) + "\n")


def test_profile_validate_directory_and_missing_file(tmp_path):
    out = invoke("profile", "validate", str(tmp_path))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: {tmp_path}: is a directory, not a regular file; give a JSON file\n",
    )
    out = wirespeed("profile", "validate", str(tmp_path / "absent.json"))
    assert (out.returncode, out.stderr) == (
        2,
        f"error: {tmp_path / 'absent.json'}: cannot be read: No such file or directory; give a readable JSON file\n",
    )
