"""tuning-profile-valid under its old module name: each rule is its own module now, named by its rule ID (see
docs/architecture.md). This module only re-exports the names it used to hold, so ``from
wirespeed.rules.profile_valid import ...`` keeps working."""

from __future__ import annotations

from wirespeed.rules.tuning_profile_valid import PROFILE_VALID, check_profile_valid, profile_problems

__all__ = [
    "PROFILE_VALID",
    "check_profile_valid",
    "profile_problems",
]
