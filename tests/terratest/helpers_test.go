package terratest_test

import "github.com/hashicorp/terraform-exec/tfexec"

func tfexecRecursive() tfexec.FormatOption { return tfexec.Recursive(true) }
