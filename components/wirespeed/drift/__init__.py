"""Node-level drift: is the tuning each node's profile promises still in place? (`wirespeed drift`)

``judge`` and ``profiles`` are pure; ``cluster`` reads a live cluster with the official ``kubernetes`` client
(imported lazily, the optional ``drift`` extra).
"""

from wirespeed.drift.judge import (
    ANNOTATION_KEY,
    CONDITION_TYPE,
    DEFAULT_STALE_AFTER,
    KINDS,
    SNAT_CONDITION_TYPE,
    DriftReport,
    ExpectedProfile,
    Finding,
    NodeFacts,
    Verdict,
    judge,
    judge_node,
)
from wirespeed.drift.profiles import CONFIG_MAP_SELECTOR, expected_profile, profiles_from_config_maps

__all__ = [
    "ANNOTATION_KEY",
    "CONDITION_TYPE",
    "CONFIG_MAP_SELECTOR",
    "DEFAULT_STALE_AFTER",
    "KINDS",
    "SNAT_CONDITION_TYPE",
    "DriftReport",
    "ExpectedProfile",
    "Finding",
    "NodeFacts",
    "Verdict",
    "expected_profile",
    "judge",
    "judge_node",
    "profiles_from_config_maps",
]
