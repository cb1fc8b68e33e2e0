"""The one error type `wirespeed plan DIR` reports: a line naming the file, key or resource that is wrong."""

from __future__ import annotations


class ProgramError(Exception):
    """The project or its program cannot be planned; ``problems`` holds every line to show (at least one)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.message = message
        self.problems = list(problems or [])
        super().__init__(message + "".join(f"\n  {p}" for p in self.problems))
