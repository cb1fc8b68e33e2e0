"""`terraform show -json` plans and states, read as the resources wirespeed's rules already judge.

Terraform users get the same gates as Pulumi users: each Terraform resource wirespeed knows is translated into
the Pulumi type token and property names the rules in ``wirespeed.rules`` read (an ``azurerm_kubernetes_cluster``
becomes an ``azure-native:containerservice:ManagedCluster`` with ``networkProfile.loadBalancerProfile...``), and
the same rule functions judge it. Reports name the Terraform address and type, and say which Terraform attribute
a message's field is.

The shapes (https://developer.hashicorp.com/terraform/internals/json-format):

- Plan Representation: top-level ``format_version``, ``terraform_version``, ``planned_values``,
  ``resource_changes``, ``prior_state``, ``configuration``, ... in any order. The planned resources are
  ``resource_changes[]``: ``address``, ``module_address`` (child modules), ``mode``, ``type``, ``name``,
  ``index``, ``provider_name`` and ``change``.
- Change Representation: ``change.actions`` (``create``, ``update``, ``no-op``, ``delete``, ``read``,
  ``forget``, or a replacement's pair), ``change.after`` (the planned values) and ``change.after_unknown``
  (the same structure, ``true`` where a value is known only after apply). A resource is checked when it will
  exist after the apply (its actions hold ``create``, ``update`` or ``no-op``); a ``delete`` or ``forget`` is
  not part of the planned infrastructure and a ``read`` is a data source.
- Values Representation: attribute values as JSON, nested blocks as arrays of objects
  (``default_node_pool: [{...}]``). A `terraform show -json` of a STATE has ``values.root_module`` with
  ``resources[]`` (each with ``address``, ``type``, ``values``) and ``child_modules[]`` of the same shape.
- Configuration Representation: ``configuration.root_module.resources[].expressions.<attr>.references`` and
  ``module_calls.<name>.expressions`` / ``module.outputs``: how a node pool's ``kubernetes_cluster_id`` (or a
  node group's ``cluster_name``) points at its cluster, through module inputs and outputs.

A value unknown until apply becomes Pulumi's unknown sentinel (``values.UNKNOWN``), unless the ``configuration``
shows nobody wrote it (:func:`~wirespeed.check.terraform.blocks.settle`): an Optional+Computed attribute or block
left out is the provider's default and reads as absent. A resource with unknowns therefore waits for
``configuration`` (Terraform writes it after ``resource_changes``). What stays unknown makes the rule that needs it
"could not be checked" at its level (``rules._engine``, ``unknown_unchecked``): a plan is judged once.

Linking a pool to its cluster: the SNAT capacity and agent rules count a cluster's separate pools. A pool whose
cluster is being created has an unknown ``kubernetes_cluster_id`` in the plan, so the link comes from the
``configuration`` references (followed through ``var.*`` module inputs and ``module.*`` outputs): the pool gets
the cluster's address as a property dependency and, when the cluster's name is known, that name. A known
``kubernetes_cluster_id`` (an ARM id, as in a state) names the cluster itself. Without a reference (a plan
without ``configuration``), a pool is linked to the one cluster of its own module, if there is exactly one;
otherwise its cluster stays unknown and the capacity rule is not applicable to it, as in a Pulumi preview.

The parts: :mod:`~wirespeed.check.terraform.reader` (a document's resources, linked), the translation table
(:mod:`~wirespeed.check.terraform.translations`) over one module per provider (``azurerm``, ``aws``,
``kubernetes``) and the value helpers they share (:mod:`~wirespeed.check.terraform.blocks`), and the
configuration links (:mod:`~wirespeed.check.terraform.configuration`).
"""

from wirespeed.check.terraform.blocks import planned
from wirespeed.check.terraform.configuration import Configuration, config_address
from wirespeed.check.terraform.reader import JSON_FORMAT_DOC, KEPT_ACTIONS, Located, Reader
from wirespeed.check.terraform.translations import LINKS, TRANSLATIONS, Translation, is_read, translate

__all__ = [
    "JSON_FORMAT_DOC",
    "KEPT_ACTIONS",
    "LINKS",
    "TRANSLATIONS",
    "Configuration",
    "Located",
    "Reader",
    "Translation",
    "config_address",
    "is_read",
    "planned",
    "translate",
]
