"""The command that installs something into the environment wirespeed is running in, as a hint in a message.

``pip install 'wirespeed[plot]'`` fails in two places a newcomer meets first: a virtualenv made by uv has no pip
(the repository's ``.venv`` is one), and wirespeed is on no public index yet, so asking pip or uv for
``wirespeed[...]`` can send the resolver to PyPI for a package it does not have. So a hint names the extra's own
requirements (read from the installed distribution's metadata: ``pyproject.toml`` is their one home) and the
installer this interpreter actually has, addressed to this interpreter by its path (``sys.executable``), which
is the environment the hint is about whatever ``pip`` or ``python`` mean on the user's PATH.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shlex
import shutil
import sys
from collections.abc import Sequence

DISTRIBUTION = "wirespeed"


def extra_requirements(extra: str) -> list[str]:
    """The requirements ``wirespeed[extra]`` adds, from the installed metadata (``matplotlib>=3.8`` for ``plot``);
    ``["wirespeed[extra]"]`` itself when wirespeed runs from a source tree with no metadata."""
    try:
        requires = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return [f"{DISTRIBUTION}[{extra}]"]
    # Core metadata writes the marker as `extra == "plot"` (PEP 685 normalised names); nothing else is needed here.
    marker = f'extra == "{extra}"'
    found = [req.strip() for req, _, m in (r.partition(";") for r in requires) if m.strip() == marker]
    return found or [f"{DISTRIBUTION}[{extra}]"]


def _has_pip() -> bool:
    try:
        return importlib.util.find_spec("pip") is not None
    except ValueError:  # imported before and then removed from sys.modules
        return False


def install_command(args: Sequence[str]) -> str:
    """A shell command that runs ``pip install ARGS`` for this interpreter's environment, with the tool it has.

    pip importable here: ``<python> -m pip install ARGS`` (a venv made by ``python -m venv``, a system Python).
    No pip (a venv made by uv): ``uv pip install --python <python> ARGS``, which is what uv's own documentation
    gives for installing into an environment other than the active one.
    """
    python = sys.executable
    if _has_pip():
        return shlex.join([python, "-m", "pip", "install", *args])
    uv = shutil.which("uv") or "uv"
    return shlex.join([uv, "pip", "install", "--python", python, *args])


def install_extra(extra: str) -> str:
    """The command that adds what ``wirespeed[extra]`` needs to this environment."""
    return install_command(extra_requirements(extra))
