# Registered numbers are written here by python -m wirespeed.numbers (make regen) from their one home: do not edit them.
"""aws-natgw-eip-quota: a zonal NAT gateway's Elastic IPs fit the account's per-gateway quota, raised first where
they do not (advisory: the gateway is not wrong, it needs the quota before it can be created)."""

from __future__ import annotations

from collections.abc import Iterator

from wirespeed.rules._model import Finding, Reads, Resource, Rule, Settings
from wirespeed.rules._natgw import NAT_GATEWAY, QUOTA_DOC, ZONAL_READS, _public, _regional, _zonal_ips
from wirespeed.sizing.nat_gateway import AWS_ZONAL_MAX_IPS, NAT_GATEWAY_EIPS


def check_eip_quota(resource: Resource, settings: Settings) -> Iterator[Finding]:
    quota = int(settings["accountQuota"])
    props = resource.props
    if not _public(props) or _regional(props):
        return  # the per-gateway quota is documented for zonal public gateways; a regional AZ takes up to 32
    ips, secondary = _zonal_ips(props)
    if ips <= quota:
        return
    default = " (AWS's default)" if quota == NAT_GATEWAY_EIPS.default else ""
    yield Finding(
        resource,
        f"{ips} Elastic IPs (allocationId + {secondary} secondaryAllocationIds) exceed the account's quota of "
        f"{quota}{default} per NAT gateway (policy setting accountQuota): creating it fails until "
        f"{NAT_GATEWAY_EIPS.label} is raised to {ips} (at most {NAT_GATEWAY_EIPS.ceiling}). Raise it first, then "
        "set accountQuota to the new value.",
    )


NAT_GATEWAY_EIP_QUOTA = Rule(
    id="aws-natgw-eip-quota",
    order=100,
    description="A zonal NAT gateway's Elastic IPs fit the account's 'Elastic IP addresses per public NAT gateway' "
    "quota.",
    severity="medium",
    default_enforcement="advisory",
    remediation=f"Request {NAT_GATEWAY_EIPS.label} (Service Quotas console or `aws service-quotas "
    f"request-service-quota-increase --service-code {NAT_GATEWAY_EIPS.service_code} --quota-code "
    f"{NAT_GATEWAY_EIPS.quota_code} --desired-value N`) before applying, then set accountQuota to the granted value.",
    source=QUOTA_DOC,
    scope="resource",
    types=(NAT_GATEWAY,),
    config_schema={
        "accountQuota": {
            "type": "integer",
            "minimum": 1,
            "maximum": AWS_ZONAL_MAX_IPS,
            "default": NAT_GATEWAY_EIPS.default,
            "description": "The account's 'Elastic IP addresses per public NAT gateway' quota (AWS's default is "
            f"{NAT_GATEWAY_EIPS.default}; Service Quotas {NAT_GATEWAY_EIPS.service_code} "
            f"{NAT_GATEWAY_EIPS.quota_code}).",
        }
    },
    reads=(Reads(NAT_GATEWAY, ZONAL_READS),),
    check=check_eip_quota,
)

RULE = NAT_GATEWAY_EIP_QUOTA
