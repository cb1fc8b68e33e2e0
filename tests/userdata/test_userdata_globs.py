"""The boot script matches interface names as the agent does: a profile glob is Go path.Match syntax ('[^...]'
negates, '!' is a character), and the script's sh `case` patterns must give the agent's answers under dash and
busybox sh. The answers are shared with the agent's Go test (tests/vectors/interface_globs.json)."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import ROOT
from userdata_run import SHELLS
from wirespeed.profile import validate_profile
from wirespeed.userdata import ScriptError, render_script
from wirespeed.userdata.script import sh_pattern

CASES = json.loads((ROOT / "tests" / "vectors" / "interface_globs.json").read_text())["cases"]


def case_matches(shell: str, glob: str, name: str) -> bool:
    script = f'case "$1" in\n{sh_pattern(glob)}) exit 0 ;;\n*) exit 1 ;;\nesac\n'
    run = subprocess.run([*SHELLS[shell], "-c", script, "sh", name], capture_output=True, text=True, check=False)
    assert run.returncode in (0, 1), run.stderr
    return run.returncode == 0


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("case", CASES, ids=[f"{c['glob']}~{c['name']}" for c in CASES])
def test_the_scripts_case_pattern_matches_what_the_agent_matches(shell, case):
    assert case_matches(shell, case["glob"], case["name"]) == case["match"]


def test_every_vector_glob_is_a_valid_profile_glob_that_renders():
    globs = sorted({c["glob"] for c in CASES})
    profile = validate_profile({"name": "globs", "interfaces": {"include": globs}})
    script = render_script(profile)
    assert f"\tcase $ws_if in\n\t{'|'.join(sh_pattern(g) for g in globs)}) ;;\n" in script
    assert "eth[0-3!]" in script  # Go's literal '!' is not negation in sh either
    assert "eth[!0-3]" in script  # Go's '[^' is sh's '[!'


def test_a_class_starting_with_a_range_from_bang_is_refused():
    profile = validate_profile({"name": "bad", "interfaces": {"include": ["x[!-%]"]}})
    with pytest.raises(ScriptError) as caught:
        render_script(profile)
    assert str(caught.value) == (
        "profile cannot be rendered as a boot script:\n"
        "  /interfaces/include/0: 'x[!-%]' is not allowed: a class may not start with a range from '!' (e.g. [!-%]): "
        "sh would read it as a negation"
    )
