"""Read what is live in a cloud account and compare it with what wirespeed would build.

``wirespeed.audit.aws``: the findings, from an inventory (pure); ``wirespeed.audit.aws_collect``: the inventory,
read with boto3 (imported only when an audit runs).
"""
