"""wirespeed's policy pack: every rule of wirespeed.rules, adapted by wirespeed.policy_pack.

Constructing PolicyPack starts the Analyzer gRPC server, prints its port and blocks until the engine stops it.
"""

from pulumi_policy import PolicyPack

from wirespeed.policy_pack import PACK_NAME, policies

PolicyPack(PACK_NAME, policies=policies())
