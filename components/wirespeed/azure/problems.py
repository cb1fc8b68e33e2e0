"""Input problems of the AKS components: where (a property path such as ``pools[1].max_surge``), and why (the
value and what is allowed). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from wirespeed.problems import InvalidInputError, Problem
from wirespeed.values import whole


class InvalidArgsError(InvalidInputError):
    """Every problem found in a component's args, raised once before anything registers."""

    def __init__(self, component: str, problems: Sequence[Problem]):
        self.component = component
        super().__init__(f"{component}: {len(problems)} invalid input(s)", problems)


@dataclass
class Collector:
    problems: list[Problem] = field(default_factory=list)

    def add(self, path: str, reason: str) -> None:
        self.problems.append(Problem(path, reason=reason))


def join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def whole_between(low: int, high: int) -> str:
    """What :func:`whole_in` allows, in its words (the Terraform modules' messages repeat them)."""
    return f"must be a whole number between {low:,} and {high:,}"


def whole_in(out: Collector, path: str, value: object, low: int, high: int) -> int | None:
    number = whole(value)
    if number is None or not low <= number <= high:
        out.add(path, f"{value!r} is not allowed: {whole_between(low, high)}")
        return None
    return number
