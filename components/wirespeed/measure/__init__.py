"""Measured demand: what the fleet did, read from Prometheus (`wirespeed size ... --from-prometheus`)."""
