"""The one way a Pulumi component or program reports bad inputs: a single ``pulumi.InputPropertiesError`` with
every :class:`~wirespeed.problems.Problem`, each under its property path, before anything registers.

The checks themselves are pure (:mod:`wirespeed.problems`); this adapter is the only place their problems meet the
Pulumi SDK.
"""

from __future__ import annotations

import pulumi

from wirespeed.problems import InvalidInputError


def input_properties_error(error: InvalidInputError) -> pulumi.InputPropertiesError:
    """``error`` (a component's args, a stack config) as Pulumi reports bad inputs: its message, and each problem's
    field and reason as one detail."""
    details = [pulumi.InputPropertyErrorDetails(property_path=p.field, reason=p.reason) for p in error.problems]
    return pulumi.InputPropertiesError(str(error), details)
