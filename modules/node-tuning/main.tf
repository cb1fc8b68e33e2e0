# Server-side apply of every object (kubernetes_manifest always applies server-side), from locals.tf: the Namespace
# first, then the rest keyed kind/name or kind/namespace/name.
resource "kubernetes_manifest" "namespace" {
  manifest = local.namespace_object

  field_manager {
    name = "wirespeed-terraform"
  }
}

resource "kubernetes_manifest" "object" {
  for_each = local.other_objects

  manifest = each.value

  field_manager {
    name = "wirespeed-terraform"
  }

  depends_on = [kubernetes_manifest.namespace]
}
