"""No input makes the `wirespeed` CLI print a traceback: a property test over every command and option.

Argument lists are generated from the CLI's own command tree (a new command or option is covered without
editing this file): valid and invalid values, non-finite and huge numbers, garbage text, missing required
options, unknown flags; files with bad UTF-8, JSON of the wrong shape, valid and mutated documents,
directories and missing paths. The contract checked for each run:

- exit 0 or 2 (1 would be a bug: the in-process runner re-raises it, so its traceback shows here), except
  ``check``, whose exit 1 is its verdict (a mandatory policy violation, on stdout, with nothing on stderr);
- no "Traceback" in either stream;
- on exit 2, stderr is exactly one line, ``error: ...``, that names the flag, the argument or the file at
  fault. Validators (``profile validate``, ``render``, ``plan``) are the exception by design: they list every
  problem at once, one ``error:`` line per problem each naming the file, or one ``error:`` heading naming it and
  an indented line per problem.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from clirun import WIRESPEED, invoke
from conftest import ROOT
from wirespeed import catalog
from wirespeed.cli import app
from wirespeed.cli._common import one_line
from wirespeed.profiles import ASSUMPTIONS

EXAMPLE_WORKLOADS = [json.loads(p.read_text()) for p in sorted((ROOT / "examples" / "workloads").glob("*.json"))]
CHECK_DOCUMENTS = [
    json.loads((ROOT / "tests" / "fixtures" / "check" / name).read_text())
    for name in ("aks-export.json", "aks-preview.json")
]
POLICY_CONFIGS = [
    {"all": "mandatory", "aks-snat-ports-minimum": {"enforcementLevel": "advisory", "minimumPorts": 2048}},
]
BUILTIN_PROFILE = json.loads((ROOT / "components" / "wirespeed" / "data" / "profiles" / "throughput.json").read_text())


@dataclass(frozen=True)
class Param:
    kind: str  # "option" or "argument"
    name: str
    opts: tuple[str, ...]
    type_name: str
    is_flag: bool
    required: bool


def _commands() -> dict[tuple[str, ...], list[Param]]:
    found: dict[tuple[str, ...], list[Param]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is not None:
            for name, sub in subcommands.items():
                walk(sub, (*path, name))
            return
        found[path] = [
            Param(
                p.param_type_name,
                p.name,
                tuple(p.opts) + tuple(p.secondary_opts),
                p.type.name,
                bool(getattr(p, "is_flag", False)),
                bool(p.required),
            )
            for p in command.params
        ]

    walk(typer.main.get_command(app), ())
    return found


COMMANDS = _commands()

# --- values -------------------------------------------------------------------------------------------------

_SAFE_TEXT = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")  # argv cannot carry NUL
garbage = st.text(_SAFE_TEXT, max_size=12)
numbers = st.one_of(
    st.sampled_from(["1", "2", "8", "12", "100", "240", "1024", "4000", "64000", "0.5", "1.25", "1.36"]),
    st.integers(-10, 70_000).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "-nan", "inf", "-inf", "1e400", "-5", "0", "-0", "0.0001", " 5", "1_000", "0x10"]),
    st.integers(1, 400).map(lambda digits: "9" * digits),
    st.integers(4_290, 4_400).map(lambda digits: "1" * digits),  # around Python's int-string digit limit
    garbage,
)
pools = st.one_of(
    st.builds(
        lambda max_count, sep, surge: f"{max_count}{sep}{surge}",
        st.one_of(st.integers(-2, 1_200).map(str), numbers),
        st.sampled_from(["", ":", "::", ";"]),
        st.one_of(
            st.just(""),
            st.integers(-1, 1_100).map(str),
            st.decimals(-5, 250, places=2, allow_nan=False).map(lambda d: f"{d}%"),
            st.sampled_from(["nan%", "inf%", "1e400%", "%", "10%%", "-0%"]),
            numbers,
        ),
    ),
    garbage,
)
drivers = st.one_of(st.sampled_from(sorted(catalog.nic_drivers())), garbage)
instance_names = st.one_of(st.sampled_from(["D16s_v6", "Standard_D16s_v6", "c6in.8xlarge", "mlx5"]), garbage)
profile_names = st.one_of(st.sampled_from(sorted(ASSUMPTIONS)), garbage)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with up to three values (at any depth) replaced by arbitrary JSON or deleted."""
    doc = json.loads(json.dumps(document))
    for _ in range(draw(st.integers(0, 3))):
        node = doc
        while True:
            keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
            if not keys:
                break
            key = draw(st.sampled_from(keys))
            child = node[key]
            if isinstance(child, dict | list) and child and draw(st.booleans()):
                node = child
                continue
            if isinstance(node, dict) and draw(st.integers(0, 4)) == 0:
                del node[key]
            else:
                node[key] = draw(json_values)
            break
    return doc


def file_contents(valid: list[Any]) -> st.SearchStrategy[bytes]:
    as_json = st.one_of(st.sampled_from(valid), st.sampled_from(valid).flatmap(mutated), json_values).map(
        lambda doc: json.dumps(doc).encode()
    )
    return st.one_of(
        as_json,
        as_json.map(lambda data: b"\xff" + data),  # not UTF-8 at the first byte
        as_json.map(lambda data: data[:-1] + b"\xc3"),  # a truncated UTF-8 sequence at the end
        st.binary(max_size=40),
        st.just(b"[" * 100_000),  # nesting deeper than the recursion limit
        st.just(b"1" * 5_000),  # a number past int's digit limit
        st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")),
    )


workload_files = file_contents(EXAMPLE_WORKLOADS)
profile_files = file_contents([BUILTIN_PROFILE])
check_files = file_contents(CHECK_DOCUMENTS)
config_files = file_contents(POLICY_CONFIGS)


class Files:
    """Paths for file arguments: real files with generated contents, a directory, a missing file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._names = itertools.count()

    def write(self, content: bytes, suffix: str = ".json") -> str:
        path = self.root / f"f{next(self._names)}{suffix}"
        path.write_bytes(content)
        return str(path)


@st.composite
def path_value(draw: st.DrawFn, files: Files, param: Param, command: tuple[str, ...]) -> str:
    if param.name == "plot":
        return draw(
            st.sampled_from(
                [
                    str(files.root / "plot.png"),
                    str(files.root),
                    str(files.root / "missing" / "plot.png"),
                    str(files.root / "plot.svg"),
                    str(files.root / "plot.PNG"),
                ]
            )
        )
    kind = draw(st.sampled_from(["file", "file", "file", "directory", "missing"]))
    if kind == "directory":
        return str(files.root)
    if kind == "missing":
        return str(files.root / "absent.json")
    if command[0] == "check":
        contents = config_files if param.name == "config" else check_files
    else:
        contents = profile_files if command[0] == "profile" else workload_files
    return files.write(draw(contents))


@st.composite
def value_for(draw: st.DrawFn, files: Files, param: Param, command: tuple[str, ...]) -> str:
    if param.type_name == "path":
        return draw(path_value(files, param, command))
    special = {
        "pool": pools,
        "driver": drivers,
        "cloud": st.one_of(st.sampled_from(["azure", "aws", "gcp", "AWS"]), garbage),
        "name": profile_names if command[0] == "profile" else instance_names,
    }.get(param.name)
    if special is not None:
        return draw(special)
    if param.type_name in {"integer", "int", "float"}:
        return draw(numbers)
    return draw(garbage)


@dataclass(frozen=True)
class Invocation:
    command: tuple[str, ...]
    argv: list[str]
    names: tuple[str, ...]  # what an error line may name: the command's flags, given values, file paths


@st.composite
def invocations(draw: st.DrawFn, files: Files) -> Invocation:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    params = COMMANDS[command]
    options: list[tuple[str, ...]] = []  # (flag,) or (flag, value): kept together when shuffled
    positionals: list[str] = []
    for param in params:
        if param.kind == "argument":
            if param.required or draw(st.booleans()):
                positionals.append(draw(value_for(files, param, command)))
            continue
        # Required options are usually given (else every run stops at "missing option"), others half the time.
        times = draw(st.integers(0, 3 if param.name == "pool" else 1)) if not param.required else 1
        if param.required and draw(st.integers(0, 9)) == 0:
            times = 0
        for _ in range(times):
            flag = draw(st.sampled_from(param.opts))
            options.append((flag,) if param.is_flag else (flag, draw(value_for(files, param, command))))
    flat = [token for option in draw(st.permutations(options)) for token in option]
    extras: list[str] = []
    if draw(st.integers(0, 9)) == 0:
        extras.append(draw(st.sampled_from(["--bogus", "--json=yes", "--help", "-x", "--pool"])))
    if draw(st.integers(0, 19)) == 0:
        extras.append(draw(garbage.filter(lambda t: t.strip() and not t.startswith("-"))))
    tokens = [*command, *flat, *positionals, *extras]
    names = tuple(
        [opt for p in params for opt in p.opts if opt.startswith("-")]
        + [t.split("=")[0] for t in tokens if t.startswith("--")]
        + positionals
        + [repr(p) for p in positionals]
        + extras
        + [t for t in flat if t.startswith(str(files.root))]
        + [" ".join(command)]
    )
    return Invocation(command, tokens, names)


# --- the contract ---------------------------------------------------------------------------------------------


# `plan` lists every problem a program's pulumi.InputPropertiesError names; `prove` every bad flag.
LISTS_EVERY_PROBLEM = {
    ("profile", "validate"),
    ("render", "node-tuning"),
    ("render", "aks-nap"),
    ("plan",),
    ("prove",),  # every bad flag at once
}


# `check` exits 1 for a verdict (a mandatory policy violation): printed on stdout, nothing on stderr.
VERDICT_EXIT_1 = {("check",)}


def assert_contract(invocation: Invocation, returncode: int, stdout: str, stderr: str) -> None:
    allowed = (0, 1, 2) if invocation.command in VERDICT_EXIT_1 else (0, 2)
    assert returncode in allowed, (invocation.argv, returncode, stderr)
    assert "Traceback" not in stdout + stderr, invocation.argv
    if returncode == 0:
        return
    if returncode == 1:
        assert stdout, (invocation.argv, stderr)
        assert stderr == "", (invocation.argv, stderr)
        return
    lines = stderr.splitlines()
    assert lines, (invocation.argv, stderr)
    assert stderr.endswith("\n"), (invocation.argv, stderr)
    # Validators list every problem at once: one `error:` heading and an indented line per problem; every other
    # failure is one line.
    if invocation.command not in LISTS_EVERY_PROBLEM or not lines[0].startswith("error: "):
        assert len(lines) == 1, (invocation.argv, stderr)

    def names(line: str) -> bool:
        return any(n and (n in line or one_line(n) in line or repr(n)[1:-1] in line) for n in invocation.names)

    if len(lines) > 1:
        # One `error:` heading, then an indented line per problem: the heading names the file (plan), or else
        # every problem names its flag, argument or file.
        assert lines[0].startswith("error: "), (invocation.argv, stderr)
        assert lines[0].endswith(":"), (invocation.argv, stderr)
        assert all(line.startswith("  ") for line in lines[1:]), (invocation.argv, stderr)
        unnamed = [] if names(lines[0]) else [line for line in lines[1:] if not names(line)]
        assert unnamed == [], f"{invocation.argv}: the error names no flag, argument or file: {unnamed}"
        return
    (line,) = lines
    assert line.startswith("error: "), (invocation.argv, stderr)
    assert names(line), f"{invocation.argv}: the error names no flag, argument or file: {line}"


@pytest.fixture(scope="module")
def files() -> Iterator[Files]:
    with tempfile.TemporaryDirectory() as root:
        yield Files(Path(root))


def test_every_command_is_generated():
    assert set(COMMANDS) >= {("size", "azure-lb"), ("catalog", "list"), ("profile", "validate"), ("plan",), ("check",)}
    assert all(params or command == ("profile", "schema") for command, params in COMMANDS.items())


@settings(max_examples=600, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_no_input_gives_a_traceback_in_process(files, data):
    invocation = data.draw(invocations(files))
    out = invoke(*invocation.argv)
    event(f"{' '.join(invocation.command)}: exit {out.returncode}")  # pytest --hypothesis-show-statistics
    assert_contract(invocation, out.returncode, out.stdout, out.stderr)


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_no_input_gives_a_traceback_through_the_console_script(files, data):
    assert WIRESPEED
    invocation = data.draw(invocations(files))
    out = subprocess.run([WIRESPEED, *invocation.argv], capture_output=True, text=True, timeout=60, check=False)
    assert_contract(invocation, out.returncode, out.stdout, out.stderr)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["catalog", "list", "--min-gbps", "-5"], id="negative-min-gbps"),
        pytest.param(["catalog", "list", "--min-gbps", "nan"], id="nan-min-gbps"),
        pytest.param(["size", "azure-lb", "--pool", "10", "--ports", "1024", "--plot", "/proc/x.png"], id="plot"),
        pytest.param(["size", "azure-lb", "--pool", "10", "--pool", "10:", "--ports", "1024"], id="pool-2"),
        pytest.param(["size", "rings", "--driver", "ena", "--line-rate-gbps", "1e400"], id="rate-overflow"),
        pytest.param(["size", "azure-natgw", "--flows", "9" * 5000], id="flows-past-int-digit-limit"),
        pytest.param(["nosuch"], id="unknown-command"),
    ],
)
def test_known_tracebacks_are_one_line_errors_in_the_console_script(argv):
    """The cases the issue reproduced, as users run them (a fresh process, the installed script)."""
    out = subprocess.run([WIRESPEED or "wirespeed", *argv], capture_output=True, text=True, timeout=60, check=False)
    assert "Traceback" not in out.stdout + out.stderr
    assert out.returncode in (0, 2)
    if out.returncode == 2:
        assert out.stderr.startswith("error: "), out.stderr
        assert out.stderr.count("\n") == 1, out.stderr


def test_non_utf8_files_through_the_console_script(files):
    bad = files.write(b"\xff\xfe\x00{")
    for argv in (["profile", "validate", bad], ["plan", "--workload", bad]):
        out = subprocess.run([WIRESPEED or "wirespeed", *argv], capture_output=True, text=True, timeout=60, check=False)
        assert out.returncode == 2
        assert out.stderr.startswith((f"error: {bad}", f"error: --workload: {bad}")), out.stderr
        assert out.stderr.count("\n") == 1, out.stderr
