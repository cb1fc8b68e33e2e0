"""Reading an EC2 launch template's user data as the node boots it: base64 as the EC2 API carries it (wrapped or
not), gzip, MIME with base64, quoted-printable and gzip parts, undecodable bytes. What the backlog rule, the SKU
rule and `audit aws` judge is only as good as this reading: a value they cannot see passes or fails silently."""

from __future__ import annotations

import base64
import gzip
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText

from wirespeed.rules._userdata import MAX_DECOMPRESSED, read_user_data

SCRIPT = "#!/bin/bash\nsysctl -w net.core.netdev_max_backlog=32768\n"
NODE_CONFIG = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: prod\n"


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def multipart(*parts: MIMEText | MIMEApplication) -> str:
    message = MIMEMultipart(boundary="BOUNDARY")
    for part in parts:
        message.attach(part)
    return message.as_string()


def shell_part(script: str | bytes, charset: str = "utf-8") -> MIMEText | MIMEApplication:
    if isinstance(script, bytes):
        return MIMEApplication(script, "x-shellscript")
    return MIMEText(script, "x-shellscript", charset)


def nodeadm(script_part: MIMEText | MIMEApplication) -> str:
    config = MIMEApplication(NODE_CONFIG.encode(), "node.eks.aws")
    return multipart(config, script_part)


def test_plain_text_user_data_is_read_as_it_is():
    data = read_user_data(SCRIPT)
    assert (data.text, data.backlog_values(), data.eks_node) == (SCRIPT, [32768], False)


def test_base64_user_data_is_decoded_also_when_wrapped_at_76_columns():
    text = "#!/bin/bash\n/etc/eks/bootstrap.sh prod\n" + "# padding the script past one base64 line\n" * 5 + SCRIPT
    encoded = b64(text)
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    assert len(wrapped.splitlines()) > 2
    for raw in (encoded, wrapped, f"  {wrapped}\n"):
        data = read_user_data(raw)
        assert (data.text, data.backlog_values(), data.eks_node) == (text, [32768], True)


def test_gzip_compressed_user_data_is_read_like_the_plain_script():
    data = read_user_data(b64(gzip.compress(SCRIPT.encode())))
    assert (data.text, data.backlog_values()) == (SCRIPT, [32768])


def test_a_gzip_bomb_is_read_only_up_to_the_cap():
    data = read_user_data(b64(gzip.compress(b"#" * (8 * MAX_DECOMPRESSED) + SCRIPT.encode())))
    assert data.text == "#" * MAX_DECOMPRESSED
    assert data.backlog_values() == []


def test_corrupt_gzip_is_not_read_as_a_script_and_does_not_crash():
    corrupt = b64(gzip.compress(SCRIPT.encode())[:12] + b"\x00" * 8)
    data = read_user_data(corrupt)
    assert (data.text, data.backlog_values()) == (corrupt, [])


def test_mime_parts_in_base64_are_decoded():
    text = nodeadm(shell_part(SCRIPT.encode()))
    assert "net.core.netdev_max_backlog" not in text  # only the decoded part says it
    for raw in (text, b64(text), b64(gzip.compress(text.encode()))):
        data = read_user_data(raw)
        assert data.eks_node
        assert data.backlog_values() == [32768]
        # Each part after its content type, one per line: a value or marker never runs into the next part.
        assert data.text == (
            f"Content-Type: application/node.eks.aws\n{NODE_CONFIG}\nContent-Type: application/x-shellscript\n{SCRIPT}"
        )


def test_mime_parts_in_quoted_printable_are_decoded():
    part = MIMEText("", "x-shellscript")
    part.replace_header("Content-Transfer-Encoding", "quoted-printable")
    part.set_payload("#!/bin/bash\nsysctl -w net.core.netdev_max_backlog=3D32768\n")
    data = read_user_data(nodeadm(part))
    assert data.backlog_values() == [32768]


def test_gzip_parts_are_decompressed():
    part = MIMEApplication(gzip.compress(SCRIPT.encode()), "x-gzip")
    data = read_user_data(multipart(part))
    assert data.backlog_values() == [32768]


def test_a_part_that_is_not_utf8_is_read_with_its_values():
    data = read_user_data(nodeadm(shell_part(b"#!/bin/bash\n# caf\xe9\n" + SCRIPT.encode())))
    assert data.backlog_values() == [32768]
    assert "# caf\ufffd\n" in data.text


def test_a_single_part_mime_document_is_decoded():
    part = MIMEApplication(SCRIPT.encode(), "x-shellscript")
    data = read_user_data(part.as_string())
    assert data.text == f"Content-Type: application/x-shellscript\n{SCRIPT}"
    assert data.backlog_values() == [32768]


def test_the_preamble_of_a_multipart_is_not_run_so_its_values_do_not_count():
    message = MIMEMultipart(boundary="BOUNDARY")
    message.preamble = "sysctl -w net.core.netdev_max_backlog=1000"
    message.attach(shell_part(SCRIPT.encode()))
    assert read_user_data(message.as_string()).backlog_values() == [32768]
    empty = MIMEMultipart(boundary="BOUNDARY")
    empty.preamble = "sysctl -w net.core.netdev_max_backlog=1000 /etc/eks/bootstrap.sh"
    data = read_user_data(empty.as_string())
    assert (data.backlog_values(), data.eks_node) == ([], False)


def test_a_header_block_up_to_2_kib_is_recognised_as_mime():
    text = nodeadm(shell_part(SCRIPT.encode()))
    before, _, after = text.partition("Content-Type:")
    padded = f"X-Padding: {'p' * (2048 - len('X-Padding: ') - len(before) - len('Content-Type:') - 1)}\n"
    document = before + padded + "Content-Type:" + after
    assert document[:2048].endswith("Content-Type:")
    assert read_user_data(document).backlog_values() == [32768]


def test_a_script_that_mentions_a_content_type_is_still_read_whole():
    script = "#!/bin/bash\ncurl -H 'Content-Type: application/json' http://x\n" + SCRIPT
    data = read_user_data(script)
    assert data.backlog_values() == [32768]
    assert script in data.text


def test_a_setting_commented_out_sets_nothing():
    """Shell, sysctl.d, Bottlerocket TOML and cloud-config comments: the line is not run, so its value does not
    count (a tuned-looking comment made a node group with kernel defaults pass the backlog rule and `audit aws`)."""
    for commented in (
        "#!/bin/bash\n# sysctl -w net.core.netdev_max_backlog=32768\n",
        "#!/bin/bash\n  #echo 32768 > /proc/sys/net/core/netdev_max_backlog\n",
        '[settings.kernel.sysctl]\n# "net.core.netdev_max_backlog" = "32768"\n',
        "#cloud-config\nwrite_files:\n  - path: /etc/sysctl.d/90-net.conf\n    # net.core.netdev_max_backlog = 32768\n",
    ):
        assert read_user_data(b64(commented)).backlog_values() == [], commented
    # A live setting beside a commented one counts, and only it.
    mixed = "#!/bin/bash\n# was: net.core.netdev_max_backlog=1000\nsysctl -w net.core.netdev_max_backlog=32768\n"
    assert read_user_data(b64(mixed)).backlog_values() == [32768]
    # Inside a MIME part too.
    part = shell_part(b"#!/bin/bash\n# sysctl -w net.core.netdev_max_backlog=32768\n")
    assert read_user_data(b64(nodeadm(part))).backlog_values() == []
