"""wirespeed: network-optimised Kubernetes node pools on AKS and EKS.

The pure core (``catalog``, ``sizing``, ``profile``) imports no Pulumi or cloud SDK, so the CLI,
policy pack and tests load it in milliseconds.
"""

__version__ = "0.1.0"
