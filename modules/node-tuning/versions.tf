terraform {
  # 1.9: validation conditions may refer to locals, so the allowed profiles, image grammar and namespace rules are
  # read from manifests.tf.json (generated from wirespeed.manifests) instead of being typed again here.
  required_version = ">= 1.9"

  required_providers {
    kubernetes = {
      source = "hashicorp/kubernetes"
      # kubernetes_manifest is generally available (no manifest_resource experiment flag) from 2.0.0.
      version = ">= 2.0.0"
    }
  }
}
