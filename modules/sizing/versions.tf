terraform {
  # 1.9: validation conditions may refer to locals and other variables, so every limit is read from
  # facts.tf.json (generated from wirespeed.sizing) instead of being typed again here.
  required_version = ">= 1.9"
}
