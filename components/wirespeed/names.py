"""Names the tuning manifests, the policy rules and `wirespeed check` share, in a module that imports nothing.

``wirespeed.manifests`` defines the DaemonSet and ConfigMap with these names; the rules recognise them by the same
names. They live here, not in ``wirespeed.manifests.node_tuning``, because importing that package loads pydantic
and the profile models (~160 ms), which a policy check of a stack export should not pay for two strings.
"""

from __future__ import annotations

AGENT_NAME = "wirespeed-agent"  # the DaemonSet's app.kubernetes.io/name label, ServiceAccount and image name
PROFILE_KEY = "profile.json"  # the key of the profile document in its ConfigMap's data
PROFILE_LABEL = "wirespeed.io/profile"  # the node label a pool carries; the DaemonSet's nodeSelector

# The tag (Azure, AWS) or annotation (Karpenter NodePool) that carries the written reason a pool may use a size
# that is not network-optimised; network-optimised-sku lets such a pool through (setting acceptWrittenReason).
# No "/" in it: Azure tag names cannot contain < > % & \ ? / (learn.microsoft.com/azure/azure-resource-manager/
# management/tag-resources#limitations); without a prefix it is still a valid Kubernetes annotation key
# (kubernetes.io/docs/concepts/overview/working-with-objects/annotations/#syntax-and-character-set: a name of at
# most 63 characters, alphanumerics, '-', '_' and '.').
NOT_NETWORK_OPTIMISED_REASON = "wirespeed.io.not-network-optimised-reason"
# The longest reason a tag can carry: Azure tag values hold 256 characters (the limitations above), AWS tag values
# 256 Unicode characters (docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html, "Tag naming limits").
REASON_MAX_LENGTH = 256
# The annotation on a tuning profile's ConfigMap that says the fastest line rate (Gb/s) of the nodes it tunes: the
# ring and backlog gates size their minimums from it (a ConfigMap alone cannot say which pools run it). Set by
# hand for now; NodeTuning does not write it yet.
LINE_RATE_ANNOTATION = "wirespeed.io/line-rate-gbps"
