"""`--plot` without matplotlib says which extra to install before printing anything (a fresh interpreter in which
importing matplotlib fails, as in an install without the `plot` extra)."""

from __future__ import annotations

import subprocess
import sys


def test_plot_without_matplotlib_names_the_extra_and_prints_nothing_else(tmp_path):
    script = (
        "import sys; sys.modules['matplotlib'] = None\n"  # what an environment without the package looks like
        "from wirespeed.cli import main; sys.argv = ['wirespeed'] + sys.argv[1:]; main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, "size", "azure-lb", "--pool", "10", "--ports", "1024", "--plot",
         str(tmp_path / "p.png")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "error: --plot needs matplotlib, which is not installed: pip install 'wirespeed[plot]'\n"
    assert not (tmp_path / "p.png").exists()
