"""Read a Pulumi project the way the Pulumi CLI would before running it: Pulumi.yaml and Pulumi.<stack>.yaml.

Pure (no Pulumi import). The result is what the language host hands the program: the project and stack names,
the entry point, and the config map of ``namespace:key`` to string values (objects and arrays JSON-encoded,
booleans ``true``/``false``), with the keys marked secret. References:
pulumi.com/docs/iac/concepts/projects/project-file (``runtime``, ``main``, ``config``) and
pulumi.com/docs/iac/concepts/projects/stack-settings-file (``config`` of a stack).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wirespeed.program.errors import ProgramError

# Stands in for a `secure:` stack value: the ciphertext cannot be read without the stack's secrets provider.
SECRET_PLACEHOLDER = "[secret]"
# Used when no --stack is given: Pulumi.yaml defaults only, no stack file read.
DEFAULT_STACK = "plan"
# Types a Pulumi.yaml config declaration may name (pulumi.com/docs/iac/concepts/projects/project-file, "config").
CONFIG_TYPES = ("string", "integer", "boolean", "array", "object")


@dataclass(frozen=True)
class Project:
    """What the program runs with."""

    directory: Path
    name: str
    stack: str
    stack_file: Path | None
    main: Path
    config: dict[str, str]
    secret_keys: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def _read_yaml(path: Path) -> dict[str, Any]:
    from wirespeed.io_limits import SMALL_LIMIT, InputFileError
    from wirespeed.yaml_input import read_yaml

    try:
        data = read_yaml(path, SMALL_LIMIT)
    except InputFileError as exc:
        raise ProgramError(str(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProgramError(f"{path}: must be a YAML mapping, got {type(data).__name__}")
    return data


def _runtime_name(runtime: object, path: Path) -> str:
    if isinstance(runtime, str):
        return runtime
    if isinstance(runtime, dict) and isinstance(runtime.get("name"), str):
        return str(runtime["name"])
    raise ProgramError(f"{path}: runtime: {runtime!r} is not allowed: a name such as python, or {{name: python}}")


def _encode(value: object) -> str:
    """Config values as the engine hands them to a program: strings as-is, everything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _qualify(key: str, project: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _type_ok(declared: str, value: object) -> bool:
    if declared == "string":
        return isinstance(value, str)
    if declared == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if declared == "boolean":
        return isinstance(value, bool)
    if declared == "array":
        return isinstance(value, list)
    return isinstance(value, dict)


def _typed_value(raw: object, declared: str | None) -> object:
    """Stack files hold scalars as YAML scalars or as strings (`pulumi config set` writes strings)."""
    if declared in (None, "string") or not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def load_project(directory: Path, stack: str | None = None) -> Project:
    """Read ``directory``'s Pulumi.yaml (and Pulumi.<stack>.yaml), checking what the Pulumi CLI checks."""
    directory = directory.resolve()
    project_file = _project_file(directory)
    doc = _read_yaml(project_file)
    name, entry = _name_and_entry(doc, project_file, directory)
    declarations = doc.get("config") or {}
    if not isinstance(declarations, dict):
        raise ProgramError(f"{project_file}: config: must be a mapping of key to declaration or value")
    config = _Config(name)
    config.declare(declarations)
    stack_file: Path | None = None
    if stack is not None:
        stack_file = _stack_file(directory, stack)
        config.set_from_stack(stack_file)
    else:
        stack = DEFAULT_STACK
    config.check_required()
    if config.problems:
        raise ProgramError(f"{project_file.parent}: the project's config is not valid", config.problems)
    return Project(
        directory=directory,
        name=name,
        stack=stack,
        stack_file=stack_file,
        main=entry,
        config=dict(sorted(config.values.items())),
        secret_keys=tuple(sorted(config.secret_keys)),
        notes=tuple(config.notes),
    )


def _project_file(directory: Path) -> Path:
    project_file = directory / "Pulumi.yaml"
    if not directory.is_dir():
        raise ProgramError(f"{directory}: no such directory")
    if not project_file.is_file():
        alt = directory / "Pulumi.yml"
        if alt.is_file():
            return alt
        raise ProgramError(f"{directory}: no Pulumi.yaml (not a Pulumi project)")
    return project_file


def _name_and_entry(doc: dict[str, Any], project_file: Path, directory: Path) -> tuple[str, Path]:
    """The project's name and the file the language host runs; a Python project only."""
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise ProgramError(f"{project_file}: name: {name!r} is not allowed: the project's name (a string)")
    runtime = _runtime_name(doc.get("runtime"), project_file)
    if runtime != "python":
        raise ProgramError(
            f"{project_file}: runtime: {runtime!r} is not supported: wirespeed plan runs Python programs only"
        )
    main = directory / str(doc.get("main") or ".")
    # `main` names the program's directory (its __main__.py runs) or, less often, the .py file itself.
    entry = main if main.suffix == ".py" else main / "__main__.py"
    if not entry.is_file():
        raise ProgramError(f"{project_file}: main: no {entry.relative_to(directory)} to run")
    return name, entry


def _stack_file(directory: Path, stack: str) -> Path:
    stack_file = directory / f"Pulumi.{stack}.yaml"
    if not stack_file.is_file():
        known = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in directory.glob("Pulumi.*.yaml"))
        choices = ", ".join(known) if known else "none (no Pulumi.<stack>.yaml here)"
        raise ProgramError(f"--stack: {stack!r} has no {stack_file.name} in {directory}; stacks here: {choices}")
    return stack_file


@dataclass
class _Config:
    """The config map as it is built: Pulumi.yaml's declarations, then a stack's values over them; every problem
    collected, each key reported once (one invalid in the stack is not reported again as missing)."""

    project: str
    values: dict[str, str] = field(default_factory=dict)
    secret_keys: set[str] = field(default_factory=set)
    declared_types: dict[str, str] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    invalid: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def declare(self, declarations: dict[Any, Any]) -> None:
        for raw_key, decl in declarations.items():
            key = _qualify(str(raw_key), self.project)
            if isinstance(decl, dict) and ("type" in decl or "default" in decl or "description" in decl):
                declared = decl.get("type")
                if declared is not None and declared not in CONFIG_TYPES:
                    self.problems.append(f"config.{raw_key}.type: {declared!r} is not one of {', '.join(CONFIG_TYPES)}")
                    continue
                if declared is not None:
                    self.declared_types[key] = str(declared)
                if decl.get("secret"):
                    self.secret_keys.add(key)
                if "default" in decl:
                    self.values[key] = _encode(decl["default"])
                else:
                    self.required.append(key)
            elif isinstance(decl, dict) and "value" in decl:
                self.values[key] = _encode(decl["value"])
            else:
                self.values[key] = _encode(decl)

    def set_from_stack(self, stack_file: Path) -> None:
        values = _read_yaml(stack_file).get("config") or {}
        if not isinstance(values, dict):
            raise ProgramError(f"{stack_file}: config: must be a mapping of namespace:key to value")
        for raw_key, raw in values.items():
            key = str(raw_key)
            if ":" not in key:
                self.problems.append(
                    f"{stack_file.name}: config key {key!r} must be namespaced (e.g. {self.project}:{key})"
                )
                continue
            if isinstance(raw, dict) and set(raw) == {"secure"}:
                self.values[key] = SECRET_PLACEHOLDER
                self.secret_keys.add(key)
                self.notes.append(f"{key} is a secure value: planned with the placeholder {SECRET_PLACEHOLDER!r}")
                continue
            declared = self.declared_types.get(key)
            value = _typed_value(raw, declared)
            if declared is not None and not _type_ok(declared, value):
                self.problems.append(
                    f"{stack_file.name}: {key}: {raw!r} is not allowed: the project declares {declared}"
                )
                self.invalid.add(key)
                continue
            self.values[key] = _encode(value)

    def check_required(self) -> None:
        missing = [k for k in self.required if k not in self.values and k not in self.invalid]
        self.problems.extend(
            f"config {k}: no default and no value in the stack; set it in Pulumi.<stack>.yaml" for k in missing
        )
