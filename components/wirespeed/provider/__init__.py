"""wirespeed's components as the Pulumi package ``wirespeed``, for Pulumi programs in any language.

An adapter over the components (:mod:`wirespeed.provider.host`): nothing below it imports it. The plugin the
engine launches is ``provider/bin/pulumi-resource-wirespeed`` (it runs ``python -m wirespeed.provider``); the schema
it serves is committed as ``provider/schema.json`` (``make regen``).
"""
