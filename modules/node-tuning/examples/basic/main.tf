# The tuning agent on every node labelled wirespeed.io/profile=throughput or =balanced, with the release's image.
# Label the node pools to tune (AKS: node_labels on azurerm_kubernetes_cluster_node_pool; EKS: labels on
# aws_eks_node_group) with module.node_tuning.node_label = <profile name>.

provider "kubernetes" {
  config_path = var.kubeconfig
}

module "node_tuning" {
  source = "../.."

  profiles = ["throughput", "balanced"]
}

output "daemon_sets" {
  value = module.node_tuning.daemon_sets
}

output "profile_checksums" {
  value = module.node_tuning.profile_checksums
}
