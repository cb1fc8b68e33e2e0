"""What an EC2 launch template's user data sets: is it an EKS node's, and which netdev_max_backlog values it writes.

Launch templates carry ``userData`` base64-encoded (the EC2 API requires it); EKS node user data is MIME
multipart (AL2023 ``application/node.eks.aws`` NodeConfig, awslabs.github.io/amazon-eks-ami/nodeadm, plus
cloud-init ``text/x-shellscript`` parts as in the EKS launch-template examples, e.g. docs.aws.amazon.com/cdk/api/v2/
docs/aws-cdk-lib.aws_eks.LaunchTemplateSpec.html), a bootstrap.sh script (AL2) or Bottlerocket TOML. The backlog
can be written as ``sysctl -w``, a sysctl.d line, a ``/proc/sys`` write, Bottlerocket's ``[settings.kernel.sysctl]``
or wirespeed's own boot script (``ws_sysctl net.core.netdev_max_backlog net/core/netdev_max_backlog 32768``).
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from dataclasses import dataclass
from typing import cast

# Markers of user data that boots an EKS node (AL2023 nodeadm, the AL2 bootstrap script, Bottlerocket).
_EKS_MARKERS = ("application/node.eks.aws", "node.eks.aws/v1alpha1", "/etc/eks/bootstrap.sh", "[settings.kubernetes]")

_SYSCTL = r"net[./]core[./]netdev_max_backlog"
# NAME followed by '=', ':' or blanks (quotes allowed around either side), then the value.
_NAME_THEN_VALUE = re.compile(_SYSCTL + r"""["']?\s*(?:[=:]|\s)\s*["']?(\d+)""")
# `echo VALUE > /proc/sys/net/core/netdev_max_backlog` (or tee).
_VALUE_THEN_PATH = re.compile(r"""(\d+)["']?\s*(?:>|\|\s*(?:sudo\s+)?tee)\s*/proc/sys/""" + _SYSCTL)
# A whole-line comment in every format user data holds (shell, sysctl.d, TOML, cloud-config YAML): a setting
# commented out sets nothing, however tuned it reads.
_COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.MULTILINE)


@dataclass(frozen=True)
class UserData:
    text: str
    eks_node: bool

    def backlog_values(self) -> list[int]:
        """Every value written to net.core.netdev_max_backlog, in order of appearance (comment lines skipped)."""
        text = _COMMENT_LINE.sub("", self.text)
        found = [(m.start(), int(m.group(1))) for m in _NAME_THEN_VALUE.finditer(text)]
        found += [(m.start(), int(m.group(1))) for m in _VALUE_THEN_PATH.finditer(text)]
        return [value for _, value in sorted(found)]


# gzip's magic bytes (RFC 1952, section 2.3.1): cloud-init and nodeadm both accept gzip-compressed user data.
_GZIP_MAGIC = b"\x1f\x8b"
# EC2 caps user data at 16 KB before base64 (EC2 user guide, "Run commands when you launch an EC2 instance");
# 1 MiB decompressed is far past any real script and stops a gzip bomb.
MAX_DECOMPRESSED = 1 << 20


def _gunzip(data: bytes) -> bytes:
    """``data`` decompressed if it is gzip (at most MAX_DECOMPRESSED bytes of it), else as it is."""
    if not data.startswith(_GZIP_MAGIC):
        return data
    inflater = zlib.decompressobj(wbits=31)
    try:
        return inflater.decompress(data, MAX_DECOMPRESSED)
    except zlib.error:
        return data


def _decode(raw: str) -> str:
    """Base64 text as the EC2 API takes it, gunzipped when compressed; plain text passes through (some programs
    pass it undecoded)."""
    stripped = "".join(raw.split())
    try:
        decoded = _gunzip(base64.b64decode(stripped, validate=True))
        return decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return raw


def _parts(text: str) -> str:
    """A MIME document's parts decoded (base64, quoted-printable, gzip) and joined, each with its content type (so
    markers and values in any part are seen); anything else as it is. A multipart's preamble and epilogue are
    dropped: cloud-init runs only its parts."""
    # Headers come first (cloud-init parses user data with the same email package, so leading blank lines end
    # the headers for it too); 2 KiB holds any real header block without lowering a whole script.
    if "content-type:" not in text[:2048].lower():
        return text
    import email  # only for MIME user data: the email package costs more to import than the rules themselves

    message = email.message_from_string(text)
    chunks = []
    for part in message.walk():
        if part.is_multipart():
            continue
        # A part that is not multipart always decodes to bytes (undecodable transfer encodings pass through).
        payload = cast(bytes, part.get_payload(decode=True))
        chunks.append(f"Content-Type: {part.get_content_type()}\n{_gunzip(payload).decode('utf-8', 'replace')}")
    return "\n".join(chunks)


def read_user_data(raw: str) -> UserData:
    text = _parts(_decode(raw))
    return UserData(text=text, eks_node=any(marker in text for marker in _EKS_MARKERS))
