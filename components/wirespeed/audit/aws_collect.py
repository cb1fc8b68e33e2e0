"""Read the inventory `wirespeed audit aws` analyses, with boto3 (imported here only).

Every list is read with its paginated list/describe call; the only per-resource calls are those AWS offers no list
form for (``eks:DescribeNodegroup``). CloudWatch is read with one ``GetMetricData`` query per gateway and metric,
up to 500 per call, each a single datapoint covering the whole window; with regional gateways, one paginated
``ListMetrics`` finds the AZ series CloudWatch holds for them (AWS documents only the ``NatGatewayId`` dimension,
so the per-AZ ones are read wherever they exist, never assumed). The account's Elastic IP quotas come from Service
Quotas (``GetServiceQuota``, two calls) and the Region's Elastic IPs from one ``DescribeAddresses``; a quota that
cannot be read (no permission, a Region or emulator that does not serve it) is reported as such and AWS's default
stands in, without failing the audit. Calls fail fast (2 s to connect, no retries): an unreachable endpoint is
reported in seconds, not after botocore's retry schedule.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from wirespeed.audit.aws import Inventory, KarpenterInstance, NatGateway, NatZone, NodeGroup, QuotaReading
from wirespeed.errors import UserError
from wirespeed.install_hint import install_command, install_extra
from wirespeed.io_limits import read_body, size_text
from wirespeed.sizing.nat_gateway import NAT_GATEWAY_EIPS, REGION_EIPS, REGIONAL, ZONAL

# GetMetricData accepts at most 500 queries per request (CloudWatch API reference, GetMetricData).
MAX_QUERIES = 500
# AWS/NATGateway metrics: a port allocation failure, and packets the gateway dropped
# (docs.aws.amazon.com/vpc/latest/userguide/vpc-nat-gateway-cloudwatch.html).
NAT_METRICS = ("ErrorPortAllocation", "PacketsDropCount")
# wirespeed's choice, not AWS's: with no route to AWS (CI, an air-gapped laptop) fail in seconds, not minutes.
CONNECT_TIMEOUT_SECONDS = 2
# A page of 1,000 instances can take a while to render (moto on 2 vCPUs: several seconds); connecting cannot.
READ_TIMEOUT_SECONDS = 60
# wirespeed's choice, not AWS's: the largest answer the audit reads is a 1,000-instance DescribeInstances page
# (a few KiB of XML per instance, so under 10 MiB) or 200 launch template versions with user data (16 KiB each at
# most, EC2 API reference: RequestLaunchTemplateData.UserData), so an answer past this is no AWS API response and
# is refused before it fills memory; --timeout alone would let a fast endpoint hand over gigabytes.
MAX_RESPONSE_BYTES = 64 << 20
# Karpenter tags every instance it launches with its NodePool's name (karpenter.sh docs, "Reference:
# Instance tags"; the key is the NodePool label karpenter.sh/nodepool).
KARPENTER_NODEPOOL_TAG = "karpenter.sh/nodepool"
# Karpenter >= 1.0 tags the instances it launches with the cluster's name under this key.
EKS_CLUSTER_TAG = "eks:eks-cluster-name"


class AwsUnreachable(UserError):  # noqa: N818 (what the CLI reports, exit 2)
    """AWS (or the endpoint given) could not be reached or refused the calls: no credentials, no route, denied."""

    field = "aws"

    def __init__(self, message: str, field: str = "aws") -> None:
        self.field = field
        super().__init__(message)


@dataclass
class Target:
    region: str | None
    cluster: str | None
    days: int
    endpoint_url: str | None = None


@dataclass
class Clients:
    ec2: Any
    eks: Any
    cloudwatch: Any
    service_quotas: Any
    region: str


# Called with each client as it is made (service name, client): where a test answers a call moto cannot
# (tests/audit/test_audit_aws.py, regional NAT gateways), with a response botocore validates against the service model.
ClientHook = Callable[[str, Any], None]


class _CappedSession:
    """A client's HTTP session that reads each response body itself, chunk by chunk, and refuses one larger than
    MAX_RESPONSE_BYTES (botocore would read it whole, however large). ``current`` names the call in flight."""

    def __init__(self, inner: Any, current: list[str]) -> None:
        self._inner = inner
        self._current = current

    def send(self, request: Any) -> Any:
        request.stream_output = True  # botocore then leaves the body unread; read here, within the cap
        response = self._inner.send(request)
        body = read_body(response.raw, MAX_RESPONSE_BYTES)
        if body is None:
            cap = size_text(MAX_RESPONSE_BYTES)
            raise AwsUnreachable(
                f"cannot reach AWS: {self._current[0]} answered more than {cap} (MAX_RESPONSE_BYTES), far past "
                "any AWS API response the audit reads; check --endpoint-url and any proxy"
            )
        response._content = body  # what botocore's own read would have left there
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _clients(target: Target, calls: Counter[str], hook: ClientHook | None) -> Clients:
    import boto3
    from botocore.config import Config

    session = boto3.session.Session(region_name=target.region)
    region = session.region_name
    if not region:
        raise AwsUnreachable("region: no region given and none configured (AWS_REGION or ~/.aws/config)", "region")
    config = Config(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        read_timeout=READ_TIMEOUT_SECONDS,
        retries={"total_max_attempts": 1, "mode": "standard"},
    )

    current = [""]

    def count(model: Any, **_: Any) -> None:
        current[0] = f"{model.service_model.service_name}:{model.name}"
        calls[current[0]] += 1

    clients = []
    for service in ("ec2", "eks", "cloudwatch", "service-quotas"):
        client = session.client(service, config=config, endpoint_url=target.endpoint_url)
        endpoint = client._endpoint  # botocore offers no public hook between the socket and its whole-body read
        endpoint.http_session = _CappedSession(endpoint.http_session, current)
        client.meta.events.register("before-call", count)
        # botocore offers no hook around its parser either: an answer it cannot read must not escape as a traceback.
        endpoint._response_parser_factory = _GuardedParsers(endpoint._response_parser_factory, service, client)
        if hook is not None:
            hook(service, client)
        clients.append(client)
    ec2, eks, cloudwatch, service_quotas = clients
    return Clients(ec2, eks, cloudwatch, service_quotas, region)


# What the audit reads of a regional NAT gateway (EC2 API reference: NatGateway, NatGatewayAddress). botocore parses
# only the members its EC2 model knows, so with a model from before regional gateways these would be silently absent
# and a regional gateway read as a zonal one: refused instead.
REGIONAL_MEMBERS = {
    "NatGateway": ("AvailabilityMode", "AutoScalingIps"),
    "NatGatewayAddress": ("AvailabilityZone", "AvailabilityZoneId"),
}


def _check_model(ec2: Any) -> None:
    """Refuse (exit 2) a botocore whose EC2 model cannot describe regional NAT gateways."""
    import botocore

    model = ec2.meta.service_model
    missing = [
        f"{shape}.{member}"
        for shape, members in REGIONAL_MEMBERS.items()
        for member in members
        if member not in model.shape_for(shape).members
    ]
    if missing:
        raise AwsUnreachable(
            f"botocore: {botocore.__version__} is not allowed: its EC2 model has no {', '.join(missing)}, so "
            "regional NAT gateways would be read as zonal ones; allowed: a botocore whose EC2 model describes them "
            f"({install_command(['-U', 'boto3'])})",
            "botocore",
        )


def _shown_endpoint(url: str) -> str:
    """The endpoint as an error may show it: scheme, host and port, never credentials a URL carries."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port is not None else "")


# How much of a parser's complaint an error line quotes: enough to tell XML from JSON trouble, never the body.
PARSER_DETAIL_CHARS = 120


class _GuardedParser:
    """One of botocore's response parsers, refusing (exit 2) what is no AWS API answer, before and while parsing.

    An HTML page (a proxy or captive portal) is refused before it is parsed: a well-formed one reads as an empty
    list to botocore's XML parser, so the audit would report a clean account it never saw. Anything else botocore
    cannot parse raises from inside its parser, and not only ResponseParserError (JSON that is a list or ``null``
    raises AttributeError or TypeError, bytes that are not UTF-8 UnicodeDecodeError): every exception there comes
    from the bytes received, so each is reported as that call's answer being unreadable."""

    def __init__(self, inner: Any, service: str, endpoint: str) -> None:
        self._inner = inner
        self._service = service
        self._endpoint = endpoint

    def _refusal(self, response: dict[str, Any], what: str) -> AwsUnreachable:
        call = f"{self._service}:{response.get('context', {}).get('operation_name', '?')}"
        return AwsUnreachable(
            f"cannot reach AWS: {call} at {self._endpoint} answered {what} (HTTP {response.get('status_code', '?')}), "
            "not an AWS API response; check --endpoint-url and any proxy"
        )

    def parse(self, response: dict[str, Any], shape: Any) -> Any:
        body = response.get("body")
        if isinstance(body, bytes) and body[:256].lstrip().lower().startswith((b"<!doctype html", b"<html")):
            raise self._refusal(response, "an HTML page")
        try:
            return self._inner.parse(response, shape)
        except Exception as exc:  # see the class: raised by the bytes received, whatever its type
            detail = " ".join(str(exc).split("\n", 1)[0].split())[:PARSER_DETAIL_CHARS]
            raise self._refusal(response, f"what botocore cannot parse ({type(exc).__name__}: {detail})") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _GuardedParsers:
    """A client's response parser factory handing out :class:`_GuardedParser` s."""

    def __init__(self, inner: Any, service: str, client: Any) -> None:
        self._inner = inner
        self._service = service
        self._endpoint = _shown_endpoint(client.meta.endpoint_url)

    def create_parser(self, protocol: str) -> _GuardedParser:
        return _GuardedParser(self._inner.create_parser(protocol), self._service, self._endpoint)


# The largest page each describe call allows (EC2 API reference: MaxResults), so a big account costs few calls.
PAGE_SIZES = {"describe_instances": 1000, "describe_nat_gateways": 1000, "describe_launch_template_versions": 200}
# The AWS/NATGateway dimension a regional gateway's per-AZ series would carry beside NatGatewayId (not in AWS's
# metric documentation, which lists NatGatewayId only: read where CloudWatch has it, via ListMetrics).
AZ_DIMENSION = "AvailabilityZone"


# wirespeed's choice: 10,000 pages of up to 1,000 items, far past any account, so an endpoint that keeps handing out
# new NextTokens is stopped here even within --timeout (botocore's paginator refuses a repeated token itself:
# PaginationError, "The same next token was received twice").
MAX_PAGES = 10_000


def _pages(client: Any, operation: str, key: str, **kwargs: Any) -> Iterator[Any]:
    if operation in PAGE_SIZES:
        kwargs["PaginationConfig"] = {"PageSize": PAGE_SIZES[operation]}
    for count, page in enumerate(client.get_paginator(operation).paginate(**kwargs), start=1):
        if count > MAX_PAGES:
            name = client.meta.method_to_api_mapping.get(operation, operation)
            raise AwsUnreachable(
                f"cannot reach AWS: {client.meta.service_model.service_name}:{name} sent more than "
                f"{MAX_PAGES:,} pages; not a usable list"
            )
        yield from page.get(key, [])


def _query(query_id: str, metric: str, dimensions: list[dict[str, str]], days: int) -> dict[str, Any]:
    return {
        "Id": query_id,
        "MetricStat": {
            "Metric": {"Namespace": "AWS/NATGateway", "MetricName": metric, "Dimensions": dimensions},
            "Period": days * 86_400,
            "Stat": "Sum",
        },
        "ReturnData": True,
    }


def _zone_series(cloudwatch: Any, regional: set[str]) -> dict[str, list[str]]:
    """Regional gateway id -> the AZs CloudWatch holds an ErrorPortAllocation series for (one paginated call)."""
    if not regional:
        return {}
    out: dict[str, list[str]] = {}
    for metric in _pages(cloudwatch, "list_metrics", "Metrics", Namespace="AWS/NATGateway", MetricName=NAT_METRICS[0]):
        dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
        if set(dims) == {"NatGatewayId", AZ_DIMENSION} and dims["NatGatewayId"] in regional:
            out.setdefault(dims["NatGatewayId"], []).append(dims[AZ_DIMENSION])
    return out


def _metric_sums(cloudwatch: Any, queries: list[dict[str, Any]], days: int) -> dict[str, float]:
    end = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    start = end - dt.timedelta(days=days)
    sums: dict[str, float] = {}
    for first in range(0, len(queries), MAX_QUERIES):
        batch = queries[first : first + MAX_QUERIES]
        for result in _pages(
            cloudwatch, "get_metric_data", "MetricDataResults", MetricDataQueries=batch, StartTime=start, EndTime=end
        ):
            sums[result["Id"]] = sums.get(result["Id"], 0.0) + float(sum(result.get("Values", [])))
    return sums


def _zone_ips(gw: dict[str, Any]) -> dict[str, int]:
    """AZ -> Elastic IPs of a regional gateway (its addresses carry their AZ; ones being removed do not count)."""
    ips: dict[str, int] = {}
    for address in gw.get("NatGatewayAddresses", []):
        az = address.get("AvailabilityZone") or address.get("AvailabilityZoneId")
        if az and address.get("Status") not in ("disassociating", "unassigning", "failed"):
            ips[az] = ips.get(az, 0) + 1
    return ips


def _nat_gateways(ec2: Any, cloudwatch: Any, days: int) -> list[NatGateway]:
    found = [
        gw
        for gw in _pages(ec2, "describe_nat_gateways", "NatGateways")
        if gw.get("State") == "available" and gw.get("ConnectivityType", "public") == "public"
    ]
    regional = {gw["NatGatewayId"] for gw in found if gw.get("AvailabilityMode") == REGIONAL}
    zones = _zone_series(cloudwatch, regional)
    gateway_dims = [[{"Name": "NatGatewayId", "Value": gw["NatGatewayId"]}] for gw in found]
    queries = [
        _query(f"m{index}_{metric_index}", metric, dims, days)
        for index, dims in enumerate(gateway_dims)
        for metric_index, metric in enumerate(NAT_METRICS)
    ]
    zone_ids: dict[tuple[str, str], str] = {}
    for gw_index, gw in enumerate(found):
        for zone_index, az in enumerate(zones.get(gw["NatGatewayId"], [])):
            query_id = zone_ids[(gw["NatGatewayId"], az)] = f"z{gw_index}_{zone_index}"
            dims = [*gateway_dims[gw_index], {"Name": AZ_DIMENSION, "Value": az}]
            queries.append(_query(query_id, NAT_METRICS[0], dims, days))
    sums = _metric_sums(cloudwatch, queries, days)
    gateways = []
    for index, gw in enumerate(found):
        gid = gw["NatGatewayId"]
        per_az = _zone_ips(gw) if gid in regional else {}
        for az in zones.get(gid, []):
            per_az.setdefault(az, 0)
        gateways.append(
            NatGateway(
                id=gid,
                subnet_id=gw.get("SubnetId", ""),
                ips=len([a for a in gw.get("NatGatewayAddresses", []) if a.get("PublicIp") or a.get("AllocationId")]),
                error_port_allocation=sums.get(f"m{index}_0", 0.0),
                packets_dropped=sums.get(f"m{index}_1", 0.0),
                availability_mode=REGIONAL if gid in regional else ZONAL,
                auto_scaling_ips=gw.get("AutoScalingIps") if gid in regional else None,
                zones=tuple(
                    NatZone(az, ips, sums.get(zone_ids[(gid, az)], 0.0) if (gid, az) in zone_ids else None)
                    for az, ips in sorted(per_az.items())
                ),
            )
        )
    return gateways


def _quotas(service_quotas: Any) -> list[QuotaReading]:
    """The account's Elastic IP quotas (GetServiceQuota: the applied value); unreadable ones say why."""
    import botocore.exceptions

    readings = []
    for quota in (NAT_GATEWAY_EIPS, REGION_EIPS):
        try:
            answer = service_quotas.get_service_quota(ServiceCode=quota.service_code, QuotaCode=quota.quota_code)
            readings.append(QuotaReading(quota, float(answer["Quota"]["Value"])))
        except botocore.exceptions.ClientError as exc:
            error = exc.response.get("Error", {})
            code = error.get("Code") or str(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?"))
            message = " ".join(str(error.get("Message", "")).split())[:200]
            readings.append(QuotaReading(quota, unreadable=f"GetServiceQuota refused: {code}: {message}".rstrip(": ")))
        except botocore.exceptions.BotoCoreError as exc:
            readings.append(QuotaReading(quota, unreadable=f"GetServiceQuota failed: {exc}"))
    return readings


def _launch_template_user_data(ec2: Any) -> dict[tuple[str, str], str]:
    """(template id, version) -> user data, for the default and latest version of every template: one paginated
    call for the whole account (DescribeLaunchTemplateVersions without a template id)."""
    out: dict[tuple[str, str], str] = {}
    for version in _pages(
        ec2, "describe_launch_template_versions", "LaunchTemplateVersions", Versions=["$Latest", "$Default"]
    ):
        data = version.get("LaunchTemplateData", {}).get("UserData", "")
        out[(version["LaunchTemplateId"], str(version["VersionNumber"]))] = data
        if version.get("DefaultVersion"):
            out[(version["LaunchTemplateId"], "$Default")] = data
    return out


def _node_groups(eks: Any, ec2: Any, clusters: list[str]) -> list[NodeGroup]:
    user_data = _launch_template_user_data(ec2)
    groups = []
    for cluster in clusters:
        for name in _pages(eks, "list_nodegroups", "nodegroups", clusterName=cluster):
            # No list call returns instance types or the launch template: one describe per node group.
            group = eks.describe_nodegroup(clusterName=cluster, nodegroupName=name)["nodegroup"]
            template = group.get("launchTemplate") or {}
            template_id = template.get("id")
            data = None
            if template_id:
                version = str(template.get("version", "$Default"))
                data = user_data.get((template_id, version))
                if data is None:  # a pinned version that is neither default nor latest
                    versions = ec2.describe_launch_template_versions(LaunchTemplateId=template_id, Versions=[version])
                    found = versions.get("LaunchTemplateVersions", [])
                    data = found[0].get("LaunchTemplateData", {}).get("UserData", "") if found else ""
            groups.append(
                NodeGroup(
                    cluster=cluster,
                    name=name,
                    instance_types=tuple(group.get("instanceTypes") or ()),
                    launch_template=template_id,
                    user_data=data,
                )
            )
    return groups


def _karpenter_instances(ec2: Any, cluster: str | None) -> list[KarpenterInstance]:
    filters = [
        {"Name": "tag-key", "Values": [KARPENTER_NODEPOOL_TAG]},
        {"Name": "instance-state-name", "Values": ["pending", "running"]},
    ]
    if cluster:
        filters.append({"Name": f"tag:{EKS_CLUSTER_TAG}", "Values": [cluster]})
    found = []
    for reservation in _pages(ec2, "describe_instances", "Reservations", Filters=filters):
        for instance in reservation.get("Instances", []):
            tags = {t["Key"]: t["Value"] for t in instance.get("Tags", [])}
            found.append(
                KarpenterInstance(
                    instance["InstanceId"], instance["InstanceType"], tags.get(KARPENTER_NODEPOOL_TAG, "")
                )
            )
    return found


def collect(target: Target, hook: ClientHook | None = None) -> Inventory:
    """Read the inventory; :class:`AwsUnreachable` when AWS cannot be reached or refuses (one line, exit 2)."""
    try:
        import botocore.exceptions
    except ImportError:
        raise AwsUnreachable(f"audit aws needs boto3: add it with {install_extra('aws')}") from None
    calls: Counter[str] = Counter()
    try:
        c = _clients(target, calls, hook)
        _check_model(c.ec2)
        clusters = [target.cluster] if target.cluster else list(_pages(c.eks, "list_clusters", "clusters"))
        inventory = Inventory(region=c.region, clusters=clusters, days=target.days)
        inventory.nat_gateways = _nat_gateways(c.ec2, c.cloudwatch, target.days)
        inventory.node_groups = _node_groups(c.eks, c.ec2, clusters)
        inventory.karpenter_instances = _karpenter_instances(c.ec2, target.cluster)
        inventory.elastic_ips = len(
            c.ec2.describe_addresses(Filters=[{"Name": "domain", "Values": ["vpc"]}])["Addresses"]
        )
        inventory.quotas = _quotas(c.service_quotas)
    except botocore.exceptions.NoCredentialsError:
        raise AwsUnreachable("cannot reach AWS: no credentials found (environment, ~/.aws, or instance role)") from None
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        raise AwsUnreachable(
            f"cannot reach AWS: {exc.operation_name} refused: {error.get('Code', '?')}: {error.get('Message', '')}"
        ) from None
    except botocore.exceptions.BotoCoreError as exc:
        # EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, NoRegionError, ...
        raise AwsUnreachable(f"cannot reach AWS: {exc}") from None
    inventory.api_calls = dict(calls)
    return inventory
