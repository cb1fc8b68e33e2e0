# Server-side apply of every object (kubernetes_manifest always applies server-side). The Namespace is its own
# resource because for_each instances are created in parallel: every namespaced object waits for it.
resource "kubernetes_manifest" "namespace" {
  manifest = local.objects[0]

  field_manager {
    name = "wirespeed-terraform"
  }
}

resource "kubernetes_manifest" "object" {
  for_each = { for i, key in local.object_keys : key => local.objects[i] if i > 0 }

  manifest = each.value

  field_manager {
    name = "wirespeed-terraform"
  }

  depends_on = [kubernetes_manifest.namespace]
}
