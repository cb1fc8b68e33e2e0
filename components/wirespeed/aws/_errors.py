"""The one way AWS components report bad args: a single ``pulumi.InputPropertiesError`` listing every problem."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from wirespeed.manifests import Problem


def input_errors(args_name: str, problems: Sequence[Problem]) -> pulumi.InputPropertiesError:
    details = [
        pulumi.InputPropertyErrorDetails(
            property_path=p.field, reason=f"{p.value!r} is not allowed; allowed: {p.allowed}"
        )
        for p in problems
    ]
    message = f"invalid {args_name}:\n" + "\n".join(f"  {p}" for p in problems)
    return pulumi.InputPropertiesError(message, details)
