"""`wirespeed check FILE`: the policy pack's rules offline, on a `pulumi stack export`, `pulumi preview --json`,
`terraform show -json` or terraform.tfstate file, or Kubernetes YAML.

Exit 0 when nothing mandatory is violated (advisory findings are printed, not fatal), 1 on a mandatory
violation (or, with ``--require-judged``, when no resource is of a type any rule reads), 2 with one ``error:``
line naming the file (or ``--config``) when the input cannot be read.
"""

from __future__ import annotations

import enum
import gc
from pathlib import Path
from typing import Annotated, Any

import typer

from wirespeed.cli._common import fail, one_line, readable_text


class OutputFormat(enum.StrEnum):
    table = "table"
    json = "json"
    github = "github"
    sarif = "sarif"


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(
    file: Annotated[
        Path,
        typer.Argument(
            help="A `pulumi stack export`, `pulumi preview --json`, `terraform show -json` or terraform.tfstate file, "
            "or Kubernetes YAML.",
            show_default=False,
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help='Policy config, as for `pulumi preview --policy-pack-config`: {"all": "mandatory", "<rule>": {...}}.',
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            help="table for people, json for scripts, github for workflow annotations, sarif for code scanning.",
        ),
    ] = OutputFormat.table,
    accept_unchecked_secrets: Annotated[
        bool,
        typer.Option(
            "--accept-unchecked-secrets",
            help="Report rules that could not read a secret value as advisory instead of failing the check. Without "
            "it, set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE to decrypt passphrase-provider secrets.",
        ),
    ] = False,
    require_judged: Annotated[
        bool,
        typer.Option(
            "--require-judged",
            help="Fail (exit 1) when no resource in the file is of a type any rule reads, instead of passing what "
            'was not judged. The config\'s {"check": {"requireJudged": true}} does the same.',
        ),
    ] = False,
) -> None:
    """Check a stack export, preview, Terraform plan or state, or Kubernetes YAML against wirespeed's policy rules:
    exit 1 on a mandatory violation, when a rule could not read a secret value (see --accept-unchecked-secrets), or
    with --require-judged when nothing was judged."""
    from wirespeed.check import SecretsError, UnreadableInputError, check_text
    from wirespeed.check.formats import RENDERERS

    resolved = load_config(config)
    secrets = stack_secrets()
    from wirespeed.io_limits import DOCUMENT_LIMIT

    text = readable_text(file, "", DOCUMENT_LIMIT, "JSON or YAML file")
    # Decoded JSON holds no reference cycles, yet the cyclic collector rescans every object kept for the stack
    # rules each time allocations pile up: 10-20% of a large export's time (bench/check/RESULTS.md). A
    # one-shot command can leave it off while it reads.
    collecting = gc.isenabled()
    gc.disable()
    try:
        report = check_text(
            text,
            str(file),
            resolved,
            secrets=secrets,
            accept_unchecked_secrets=accept_unchecked_secrets,
            require_judged=require_judged,
        )
    except (UnreadableInputError, SecretsError) as exc:
        fail(f"{file}: {exc}")
    finally:
        if collecting:
            gc.enable()
    del text
    if output_format is OutputFormat.table:
        from wirespeed.check.formats import render_table
        from wirespeed.tables import output_width

        typer.echo(render_table(report, width=output_width()).rstrip("\n"))
    else:
        typer.echo(RENDERERS[output_format.value](report))
    if report.failed:
        raise typer.Exit(1)


def stack_secrets() -> Any:
    """What decrypts the document's passphrase-provider secrets: the passphrase from the environment, as Pulumi's
    CLI reads it (the file named by PULUMI_CONFIG_PASSPHRASE_FILE read here, exit 2 when it cannot be)."""
    from wirespeed.check.secrets import PASSPHRASE_FILE_ENV, StackSecrets, passphrase_from_env

    passphrase, source = passphrase_from_env()
    if passphrase is None and source:
        passphrase = readable_text(Path(source), PASSPHRASE_FILE_ENV).strip()
        source = f"{PASSPHRASE_FILE_ENV} ({source})"
    return StackSecrets(passphrase=passphrase, source=source)


def load_config(path: Path | None, flag: str = "--config") -> Any:
    """The resolved policy config from ``path`` given as ``flag`` (the rules' defaults without one); exit 2
    with one line naming the flag, the file and every field at fault."""
    from wirespeed.rules import ConfigError, resolve_config

    if path is None:
        return resolve_config(None)
    import json

    text = readable_text(path, flag)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{flag} {path}: not JSON: {exc}")
    except RecursionError:
        fail(f"{flag} {path}: not readable: JSON nested deeper than Python's recursion limit")
    except ValueError as exc:  # an integer past Python's digit limit: no threshold is that long
        fail(f"{flag} {path}: not readable: {exc}")
    if not isinstance(document, dict):
        # resolve_config reads None as "no config", but a file holding `null` or `[]` is a mistake, not a choice.
        shown = "null" if document is None else type(document).__name__
        fail(f'{flag} {path}: {shown} is not allowed: a JSON object such as {{"all": "mandatory"}}')
    try:
        return resolve_config(document)
    except ConfigError as exc:
        problems = "; ".join(f"{where}: {what}" for where, what in exc.problems)
        fail(f"{flag} {path}: {one_line(problems)}")
