variable "kubeconfig" {
  description = "Path of the kubeconfig of the cluster to install into (kubernetes_manifest reads its API at plan time)."
  type        = string
  default     = "~/.kube/config"
}
