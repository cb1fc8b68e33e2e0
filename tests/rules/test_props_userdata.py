"""Property test of the user-data reader `audit aws` and the backlog rule share (wirespeed.rules._userdata): it reads
what the user data sets, not a marker. For a backlog written in any of the forms a node's user data uses (a ``sysctl
-w``, a sysctl.d line, a ``/proc/sys`` write, Bottlerocket TOML, wirespeed's boot script), carried in any way EC2
carries it (base64, gzip, a nodeadm MIME part), the node group is tuned exactly when the value reaches the minimum
for its line rate; the same line commented out never counts; and no bytes at all make the reader raise.
"""

from __future__ import annotations

import base64
import gzip
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart

from hypothesis import given
from hypothesis import strategies as st

from hostile import bounded
from wirespeed.audit.aws import backlog_minimum, tuning_gap
from wirespeed.userdata import SCRIPT_MARKER

FORMS = {
    "sysctl -w": "#!/bin/bash\nsysctl -w net.core.netdev_max_backlog={v}\n",
    "sysctl.d": "#!/bin/bash\ncat > /etc/sysctl.d/90-net.conf <<EOF\nnet.core.netdev_max_backlog = {v}\nEOF\n",
    "/proc/sys": "#!/bin/sh\necho {v} > /proc/sys/net/core/netdev_max_backlog\n",
    "bottlerocket": '[settings.kubernetes]\ncluster-name = "prod"\n[settings.kernel.sysctl]\n'
    '"net.core.netdev_max_backlog" = "{v}"\n',
    "wirespeed script": f"#!/bin/sh\n{SCRIPT_MARKER} profile x\n"
    "ws_sysctl net.core.netdev_max_backlog net/core/netdev_max_backlog {v}\n",
}
INSTANCE_TYPES = [[], ["m6i.xlarge"], ["c6in.8xlarge"], ["c6in.32xlarge", "m6i.xlarge"], ["no-such.type"]]


def carried(text: str, how: str) -> str:
    data = text.encode()
    if how == "gzip":
        data = gzip.compress(data)
    elif how == "mime":
        message = MIMEMultipart(boundary="BOUNDARY")
        message.attach(MIMEApplication(b"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n", "node.eks.aws"))
        message.attach(MIMEApplication(gzip.compress(data), "x-shellscript"))
        data = message.as_bytes()
    return base64.b64encode(data).decode()


@bounded(300)
@given(
    value=st.one_of(st.integers(0, 10**7), st.sampled_from([999, 1_000, 8_191, 8_192, 16_383, 16_384, 32_768])),
    form=st.sampled_from(sorted(FORMS)),
    how=st.sampled_from(["base64", "gzip", "mime"]),
    types=st.sampled_from(INSTANCE_TYPES),
    commented=st.booleans(),
)
def test_tuned_exactly_when_the_value_set_reaches_the_minimum(value, form, how, types, commented):
    text = FORMS[form].format(v=value)
    if commented:
        text = "\n".join(f"# {line}" if str(value) in line else line for line in text.splitlines()) + "\n"
    gap = tuning_gap(carried(text, how), types)
    minimum, _ = backlog_minimum(types)
    if commented:
        # Unset: the kernel default 1,000, judged as that value written out would be.
        assert (gap is None) == (minimum <= 1_000)
        unset = "does not set net.core.netdev_max_backlog, so nodes keep the kernel default"
        assert gap is None or gap.startswith(unset)
    elif value >= minimum:
        assert gap is None
    else:
        assert gap is not None
        assert f"to {value:,}, below the minimum {minimum:,}" in gap


@bounded(300)
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.binary(max_size=300).map(gzip.compress),
        st.text(max_size=300).map(str.encode),
    ),
    encode=st.booleans(),
)
def test_no_user_data_makes_the_reader_raise(data, encode):
    raw = base64.b64encode(data).decode() if encode else data.decode("latin-1")
    gap = tuning_gap(raw, ["c6in.8xlarge"])
    assert gap is None or isinstance(gap, str)
