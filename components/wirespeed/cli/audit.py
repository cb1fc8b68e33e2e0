"""`wirespeed audit aws`: read what is live in an AWS account and report what wirespeed would change.

Exit 0: no findings; 1: findings (listed); 2: bad flags, or AWS cannot be reached (one ``error:`` line). boto3 is
imported only when the audit runs (the ``aws`` extra; the error says how to add it to this environment).
"""

from __future__ import annotations

import re
from typing import Annotated

import typer

from wirespeed.cli._common import JsonFlag, WholeHelp, emit, fail, run

# Region names as AWS spells them: eu-west-1, us-gov-west-1, ap-southeast-4.
REGION_PATTERN = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$")

audit_app = typer.Typer(
    rich_markup_mode=None,  # click's plain help: rich cut long flag names at 80 columns (--accept-unchecked-se…)
    cls=WholeHelp,
    help="Audit live cloud resources against what wirespeed builds.",
    no_args_is_help=True,
)

AUDIT_AWS_EPILOG = (
    "Reads NAT gateways, zonal and regional (IPs, per AZ for regional ones; ErrorPortAllocation and PacketsDropCount "
    "over the window, per AZ where CloudWatch holds a regional gateway's AZ series), the account's Elastic IP quotas "
    "(Service Quotas: 'Elastic IP addresses per public NAT gateway', 'Elastic IP addresses per Region'; AWS's default "
    "when unreadable, and the output says so), EKS node groups and Karpenter-launched instances (instance type, "
    "launch template user data). Credentials and region come from the usual AWS sources (environment, ~/.aws, "
    "instance role).\n\n"
    "Exit 0 when clean, 1 with findings, 2 when AWS cannot be reached or a flag is wrong."
)


@audit_app.command("aws", epilog=AUDIT_AWS_EPILOG)
def audit_aws(
    region: Annotated[str | None, typer.Option(help="AWS region. Default: AWS_REGION or ~/.aws/config.")] = None,
    cluster: Annotated[
        str | None, typer.Option(help="Only this EKS cluster's node groups and instances. Default: every cluster.")
    ] = None,
    days: Annotated[int, typer.Option(help="Window for the NAT gateway metrics, in days (1..455).")] = 7,
    endpoint_url: Annotated[
        str | None,
        typer.Option(help="Send every API call to this URL (a local emulator such as moto); http:// or https://."),
    ] = None,
    timeout: Annotated[
        int,
        typer.Option("--timeout", min=1, max=3_600, help="Seconds for every AWS call together; past it, exit 2."),
    ] = 300,
    as_json: JsonFlag = False,
) -> None:
    """Find NAT gateways that drop connections, non-network-optimised nodes and node groups without boot tuning."""
    from wirespeed.audit.aws import MAX_DAYS, analyse
    from wirespeed.audit.aws_collect import Target, collect

    if not 1 <= days <= MAX_DAYS:
        fail(f"--days: {days} is not allowed: a whole number of days from 1 to {MAX_DAYS} (CloudWatch retention)")
    if endpoint_url is not None and not endpoint_url.startswith(("http://", "https://")):
        fail(f"--endpoint-url: {endpoint_url!r} is not allowed: a URL starting with http:// or https://")
    if region is not None and not REGION_PATTERN.match(region):
        fail(f"--region: {region!r} is not allowed: an AWS region name such as eu-west-1")
    if cluster is not None and not cluster:
        fail("--cluster: '' is not allowed: an EKS cluster name")
    # Errors name what is at fault in the user's words: the flag, or the command when AWS itself is unreachable.
    from wirespeed.deadline import DeadlineExceeded, deadline

    try:
        # One deadline over every call: botocore's timeouts bound each socket read, not a drip-fed answer.
        with deadline(timeout):
            inventory = run(
                lambda: collect(Target(region, cluster, days, endpoint_url)), {"region": "--region", "aws": "audit aws"}
            )
    except DeadlineExceeded:
        fail(f"audit aws: AWS was not read within --timeout {timeout:g} s; nothing was judged")
    report = analyse(inventory)
    emit(report, as_json)
    if not report.clean:
        raise typer.Exit(1)
