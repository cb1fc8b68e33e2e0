"""Reading a file a user named, as hostile input: regular files only, never more than a stated size.

A path can name a FIFO with no writer (``open`` blocks forever), a character device such as ``/dev/zero`` (a
read never ends), a directory, or a file far larger than any document of its kind. Every command that reads a
file the user gave goes through :func:`read_text`, so each of those is one ``error:`` line naming the path,
at once, instead of a hang or a process killed for memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from wirespeed.errors import UserError

MIB = 1 << 20
# Caps, wirespeed's choice: ten times the largest real document of each kind we have seen, so they never bite a
# real file but stop a runaway one long before memory does.
# A `pulumi stack export` / preview / `terraform show -json` of 200,000 resources is 334 MiB (bench/check).
DOCUMENT_LIMIT = 1024 * MIB
# A profile, workload, policy config, Pulumi.yaml or stack file is a few KiB.
SMALL_LIMIT = 1 * MIB
# `wirespeed plan --json` of a project: about 2 KiB per pool.
PLAN_JSON_LIMIT = 64 * MIB
# A kubeconfig with hundreds of contexts and inline certificates is well under 1 MiB; the agent's cap
# (agent/cmd/wirespeed-agent/kubeconfig.go maxKubeconfigBytes), so both read the same files.
KUBECONFIG_LIMIT = 16 * MIB
# One page of a Kubernetes list `wirespeed drift` reads (500 objects, kubectl's chunk size): a Node with a long
# image list is ~50 KiB, so a page of them is ~25 MiB; a server sending more is not a Kubernetes API server.
API_PAGE_LIMIT = 256 * MIB


class InputFileError(UserError):
    """A file the user named cannot be read as a document: not a regular file, too large, unreadable, not UTF-8.

    ``reason`` is the message without the file's label, for callers that phrase their own."""

    def __init__(self, label: str, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{label}: {reason}")


def read_body(raw: Any, limit: int) -> bytes | None:
    """The whole body of an HTTP response (urllib3's, unread), or None once it passes ``limit`` bytes: the
    connection is then closed and the rest never read. A deadline bounds a slow body; this bounds a fast one."""
    body = bytearray()
    for chunk in raw.stream(64 << 10):
        body += chunk
        if len(body) > limit:
            raw.close()
            return None
    return bytes(body)


def size_text(limit: int) -> str:
    return f"{limit // MIB:,} MiB" if limit >= MIB else f"{limit:,} bytes"


def read_bytes(path: Path, limit: int, shown: str | None = None, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    ``shown`` is how messages name the file (``--config x.json``); ``what`` is the kind of file expected. Opened
    non-blocking, so a FIFO with no writer is refused at once rather than waited on.
    """
    label = shown if shown is not None else str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputFileError(label, f"cannot be read: {exc.strerror or exc}; give a readable {what}") from None
    except ValueError as exc:  # an embedded NUL: no file can have that name
        raise InputFileError(label, f"is not a file name: {exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(label, f"is {_kind(info.st_mode)}, not a regular file; give a {what}")
        if info.st_size > limit:
            raise InputFileError(
                label, f"is {info.st_size:,} bytes, more than the {size_text(limit)} a {what} may have"
            )
        chunks = []
        remaining = limit + 1  # a file that grows while read is caught too
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 8 * MIB))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise InputFileError(label, f"cannot be read: {exc.strerror or exc}; give a readable {what}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise InputFileError(label, f"grew past the {size_text(limit)} a {what} may have while it was read")
    return data


# The byte order marks of UTF-16 (The Unicode Standard, section 23.8 "Specials", U+FEFF).
_UTF16_LE_BOM = b"\xff\xfe"
_UTF16_BE_BOM = b"\xfe\xff"


def read_text(path: Path, limit: int, shown: str | None = None, what: str = "file") -> str:
    """:func:`read_bytes` decoded as UTF-8; a byte that is not UTF-8 is named with its offset."""
    data = read_bytes(path, limit, shown, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        label = shown if shown is not None else str(path)
        if data.startswith((_UTF16_LE_BOM, _UTF16_BE_BOM)):
            # Windows PowerShell 5's `>` writes UTF-16 with a byte order mark (about_Redirection).
            raise InputFileError(
                label,
                f"is UTF-16 (a byte order mark {data[:2].hex(' ')}: what Windows PowerShell's `>` writes); give a "
                f"UTF-8 {what}: write it with `| Out-File -Encoding utf8` or convert it with "
                "`iconv -f UTF-16 -t UTF-8`",
            ) from None
        raise InputFileError(
            label, f"byte {exc.start} ({data[exc.start]:#04x}) is not UTF-8; give a UTF-8 {what}"
        ) from None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"
