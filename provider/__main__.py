"""The provider as the Python language host runs a source plugin (PulumiPlugin.yaml): the same server
pulumi-resource-wirespeed starts, from the installed library."""

from wirespeed.provider.host import serve

serve()
