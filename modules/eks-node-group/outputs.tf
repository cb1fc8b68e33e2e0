output "node_group_name" {
  description = "The node group's name in EKS."
  value       = aws_eks_node_group.this.node_group_name
}

output "node_group_arn" {
  description = "The node group's ARN."
  value       = aws_eks_node_group.this.arn
}

output "launch_template_id" {
  description = "The launch template carrying the tuning user data."
  value       = aws_launch_template.this.id
}

output "launch_template_version" {
  description = "The launch template version the node group runs."
  value       = aws_launch_template.this.latest_version
}

output "profile" {
  description = "The profile the nodes apply (<profile>-ena-express with ENA Express): run the node agent (modules/node-tuning) with it."
  value       = local.profile_name
}

output "user_data" {
  description = "The boot-time user data (plain text, before base64), exactly as wirespeed renders it for this profile, OS and ENA Express setting."
  value       = local.user_data
}

output "ami_type" {
  description = "The EKS AMI type: AL2023 or Bottlerocket for the types' architecture."
  value       = local.ami_type
}

output "instance_types" {
  description = "The instance types, canonical names from wirespeed's catalog."
  value       = [for t in local.found_types : t.name]
}

output "ring_class" {
  description = "The built-in profile whose ring sizes suit the types' sustained bandwidth (balanced: at most 25 Gb/s; throughput: above)."
  value       = local.ring_class
}

output "labels" {
  description = "The node labels, wirespeed.io/profile included."
  value       = local.labels
}
