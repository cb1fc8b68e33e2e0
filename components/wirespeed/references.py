"""The public field reports wirespeed's defaults come from, as messages and rule sources name them.

docs/references.md lists each with its title, publisher and URL under the same id; tests/repo/test_references.py keeps
the two in step. A message cites a report by publisher and title (the short form below), never by a path outside
this repository.
"""

from __future__ import annotations

from typing import NamedTuple


class Report(NamedTuple):
    id: str
    publisher: str
    title: str
    url: str

    @property
    def short(self) -> str:
        """How a message names the report: ``Elastic, 'Debugging Azure Networking ...'``."""
        return f"{self.publisher}, '{self.title}'"


ELASTIC_AKS = Report(
    "elastic-aks",
    "Elastic",
    "Debugging Azure Networking for Elastic Cloud Serverless",
    "https://www.elastic.co/observability-labs/blog/debugging-aks-packet-loss",
)
IBM_VIRT_LOSS = Report(
    "ibm-virt-loss",
    "IBM",
    "Diagnosing Packet Loss in Linux Network Virtualization Layers: Part 1",
    "https://www.ibm.com/blog/diagnosing-packet-loss-in-linux-network-virtualization-layers-part-1/",
)
AKS_NET_TUNING = Report(
    "aks-net-tuning",
    "Microsoft AKS team",
    "Performance Tuning AKS for Network Intensive Workloads",
    "https://blog.aks.azure.com/2025/07/25/network-perf-aks",
)
DATADOG_BOTTLENECKS = Report(
    "datadog-bottlenecks",
    "Datadog",
    "Not Just Another Network Latency Issue",
    "https://www.datadoghq.com/blog/engineering/not-just-another-network-latency-issue/",
)
ASOS_AKS_SIZING = Report(
    "asos-aks-sizing",
    "ASOS",
    "An AKS Performance Journey: Part 1",
    "https://medium.com/asos-techblog/an-aks-performance-journey-part-1-sizing-everything-up-ee6d2346ea99",
)
REPORTS = (ELASTIC_AKS, IBM_VIRT_LOSS, AKS_NET_TUNING, DATADOG_BOTTLENECKS, ASOS_AKS_SIZING)
