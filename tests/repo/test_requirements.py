"""One source for the Pulumi SDK pins: pyproject.toml's `pulumi` extra. Everything that installs the SDKs installs that
extra, so `make demo`, `pulumi up`, the examples and the tests all run the same versions."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, python_examples
from pins import EXTRAS, VERSION, exact_pins, requirement_lines

EXAMPLES = [p.name for p in python_examples()]


def test_the_pulumi_extra_pins_exactly_the_sdks_plan_and_the_examples_import():
    """`wirespeed plan` runs the root project and every example in-process, so the extra is what they import."""
    pins = exact_pins(EXTRAS["pulumi"])
    assert sorted(pins) == ["pulumi", "pulumi-aws", "pulumi-azure-native", "pulumi-kubernetes"]
    assert len(pins) == len(EXTRAS["pulumi"]), "every requirement of the `pulumi` extra is an exact pin"
    imported = set()
    for program in [ROOT / "__main__.py", *(ROOT / "examples" / name / "__main__.py" for name in EXAMPLES)]:
        imported |= set(re.findall(r"^(?:import|from) (pulumi\w*)", program.read_text(), re.MULTILINE))
    assert {name.replace("_", "-") for name in imported} <= set(pins)


def test_the_root_project_installs_the_extra_from_this_checkout():
    assert requirement_lines(ROOT / "requirements.txt") == ["-e .[pulumi]"]


def test_the_tests_run_against_the_extras_users_install():
    assert "wirespeed[pulumi,plot,aws,drift]" in EXTRAS["dev"]
    repeated = set(exact_pins(EXTRAS["dev"])) & set(exact_pins(EXTRAS["pulumi"]))
    assert not repeated, f"{sorted(repeated)} pinned twice: the `pulumi` extra is the one place"


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_example_installs_the_released_library_with_the_extra(example):
    """Not `-e ../..`: a team copies an example out of this repository, where no checkout is two folders up."""
    assert requirement_lines(ROOT / "examples" / example / "requirements.txt") == [f"wirespeed[pulumi]=={VERSION}"]
