terraform {
  # 1.9: validation rules read other variables.
  required_version = ">= 1.9"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # What modules/aws-nat-egress-regional needs (v6.24.0: regional NAT gateways), even with mode = "zonal":
      # Terraform installs one provider for every module a configuration calls. On an older provider, call
      # modules/aws-nat-egress-zonal directly (>= 5.10; the same inputs without mode).
      version = ">= 6.24.0"
    }
  }
}
