"""Bad input reported all at once: the one record every check returns, and the one error that carries a list of them.

Components, stack config parsers, the tuning manifests and the boot script check every input before anything is
rendered or registered and return :class:`Problem` records; a front end raises them together as an
:class:`InvalidInputError` (a Pulumi component turns that into one ``pulumi.InputPropertiesError`` through
:mod:`wirespeed.pulumi_inputs`; the CLI prints a line each; the Terraform generators write the same words into each
module's validation). Pure: no imports beyond the standard library, so every layer can use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wirespeed import message_table


@dataclass(frozen=True)
class Problem:
    """One bad input: where it is (``field``: an argument, a property path such as ``pools[1].max_surge``, a JSON
    pointer, a stack config key), the value given and what would have been accepted.

    ``reason`` is what follows ``field: `` wherever the problem is printed. It defaults to
    ``"<value!r> is not allowed; allowed: <allowed>"``; a check whose words differ (the AKS components and the boot
    script say ``"<value!r> is not allowed: <allowed>"``, as :class:`wirespeed.errors.FieldError` does) or that
    has no single value at fault (``"infeasible: ..."``) passes its own.
    """

    field: str
    value: object = None
    allowed: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        if not self.reason:
            object.__setattr__(self, "reason", f"{self.value!r} is not allowed; allowed: {self.allowed}")

    @classmethod
    def refused(cls, field: str, value: object, allowed: str) -> Problem:
        """``value`` is not allowed at ``field``, in FieldError's words: ``"<value!r> is not allowed: <allowed>"``."""
        return cls(field, value, allowed, f"{value!r} is not allowed: {allowed}")

    @property
    def path(self) -> str:
        """``field``, by the name the AKS components give it (a property path)."""
        return self.field

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class InvalidInputError(ValueError):
    """Every problem found in one input, raised once before anything is rendered or registered.

    The message is ``heading`` and a line per problem; ``problems`` keeps the records for front ends that show
    them their own way.
    """

    def __init__(self, heading: str, problems: Sequence[Problem]) -> None:
        self.heading = heading
        self.problems = list(problems)
        super().__init__(f"{heading}:\n" + "\n".join(f"  {p}" for p in self.problems))


# A name this many edits or fewer from a known one is suggested as the one meant; the Go agent reads the same bound
# from the same message table (agent/internal/profile), so both name the same field for the same typo.
SUGGEST_WITHIN_EDITS = message_table.SUGGEST_WITHIN_EDITS


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance by code point. The Go agent computes the same (profile.editDistance), so both suggest
    the same name for the same typo."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def nearest(name: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``name`` is most likely a typo of (fewest edits, then alphabetical), or None when
    none is within :data:`SUGGEST_WITHIN_EDITS` (and fewer edits than ``name`` is long): wirespeed's one "did you
    mean" for every input's keys. A leading ``/`` or ``.`` (a JSON pointer or path typed as a key) is not counted."""
    bare = name.lstrip("/.")
    candidates = sorted(set(known))
    if not candidates:
        return None
    best = min(candidates, key=lambda k: (edit_distance(bare, k), k))
    distance = edit_distance(bare, best)
    # Fewer edits than the name is long: otherwise any short name "suggests" a rewrite of it (``//`` -> ``mtu``).
    return best if best != name and distance <= SUGGEST_WITHIN_EDITS and distance < len(bare) else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean "sysctls"?)`` for a likely typo, else empty."""
    near = nearest(name, known)
    return message_table.say("did_you_mean", near=near) if near else ""


def quoted_number(text: str, must: str = message_table.NUMBER_WORDS[1]) -> str:
    """Why a number written as a JSON string is refused, and the fix: the one rule for every JSON input wirespeed
    reads (profiles, workload files, policy config; docs/inputs.md says it once). The Go agent words a profile's
    the same (agent/internal/profile: quotedNumber)."""
    return message_table.say("quoted_number", must=must, text=text)


def unknown_keys(file: str, keys: Sequence[str], known: Sequence[str]) -> list[Problem]:
    """A problem for each of ``keys`` that is not one of ``known`` (a stack file's ``namespace:key`` config keys
    against the ones its project declares), naming the file and the key, with the nearest known key (:func:`nearest`:
    a misspelt key is otherwise silently ignored and its default used)."""
    problems = []
    by_name = {k.partition(":")[2] or k: k for k in known}  # the shared namespace would make every key look close
    for key in keys:
        if key in known:
            continue
        near = nearest(key.partition(":")[2] or key, by_name)
        hint = f"did you mean {by_name[near]}?" if near else f"the project declares {', '.join(sorted(known))}"
        problems.append(Problem(f"{file}: {key}", key, hint, f"not a config key the project declares; {hint}"))
    return problems
