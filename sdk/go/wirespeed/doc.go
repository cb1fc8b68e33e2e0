// Package wirespeed exports types, functions, subpackages for provisioning wirespeed resources.
package wirespeed
