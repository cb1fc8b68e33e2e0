"""How the plan prints a registered number or address."""

from __future__ import annotations

import ipaddress


def fmt(n: int | None) -> str:
    """A count with thousands separators, or "?" when it is unknown (unset, [secret], not a whole number)."""
    return "?" if n is None else f"{n:,}"


def address_order(address: str) -> tuple[int, int, str]:
    """Sort key for IP addresses: IPv4 before IPv6, each numerically (192.0.2.9 before 192.0.2.10); text last."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return (7, 0, address)
    return (ip.version, int(ip), address)


# wirespeed's choice: what `plan` wraps its prose to when stdout is not a terminal (a CI log, a pull request
# comment, a file): wide enough for a resource line, narrow enough for a side-by-side diff.
PLAIN_WIDTH = 100
_FENCE = "```"
_TREE_BRANCHES = {"├─ ": "│  ", "└─ ": "   "}


def _hanging_indent(line: str) -> str:
    """Where a wrapped line's continuation starts: under the text of its tree branch, list bullet or indent."""
    lead = len(line) - len(line.lstrip(" │├└─"))
    prefix = line[:lead]
    for branch, through in _TREE_BRANCHES.items():
        if prefix.endswith(branch):
            return prefix[: -len(branch)] + through + "   "
    bullet = "  " if line[lead:].startswith("- ") else ""
    return " " * len(prefix) + bullet + ("  " if prefix.strip(" ") == "" and not bullet else "")


def wrap_prose(text: str, width: int) -> str:
    """Every line of ``text`` longer than ``width`` wrapped at spaces, except inside ``` fences (user data scripts
    are kept byte for byte). A single word longer than ``width`` (a URL, an ID) stays whole rather than broken."""
    import textwrap

    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.startswith(_FENCE):
            fenced = not fenced
        if fenced or line.startswith(_FENCE) or len(line) <= width:
            out.append(line)
            continue
        out.extend(
            textwrap.wrap(
                line,
                width,
                subsequent_indent=_hanging_indent(line),
                break_long_words=False,
                break_on_hyphens=False,
            )
            or [line]
        )
    return "\n".join(out)
