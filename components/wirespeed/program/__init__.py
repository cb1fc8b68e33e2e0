"""Plan a Pulumi program offline: run it in this process under the SDK's mocks and review what it registers.

Only :mod:`wirespeed.program.runner` imports Pulumi, and only when :func:`run_program` is called: importing this
package stays as light as the rest of the library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirespeed.program.errors import ProgramError
from wirespeed.program.model import Invoke, ProgramPlan, RegisteredResource
from wirespeed.program.project import Project, load_project

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Invoke",
    "ProgramError",
    "ProgramPlan",
    "Project",
    "RegisteredResource",
    "load_project",
    "run_program",
]


def run_program(directory: Path | str, stack: str | None = None) -> ProgramPlan:
    """Run the Pulumi project in ``directory`` under mocks; see :func:`wirespeed.program.runner.run_program`."""
    from wirespeed.program.runner import run_program as run

    return run(directory, stack)
