"""``python -m wirespeed.terraform``: write every generated file the Terraform modules are built from."""

from __future__ import annotations

import sys

from wirespeed.terraform import ROOT, outputs


def main() -> int:
    for path, text in outputs().items():
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
