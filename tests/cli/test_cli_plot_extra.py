"""`--plot` without matplotlib (simulated: a fresh interpreter in which importing matplotlib fails, as in an install
without the `plot` extra) still prints the sizing, then one warning line with the command that adds matplotlib to
this environment; the exit status stays the sizing's. tests/examples/test_examples_copied.py does the same in a real
environment without matplotlib and runs the printed command."""

from __future__ import annotations

import json
import subprocess
import sys

from wirespeed.install_hint import install_extra

SCRIPT = (
    "import sys; sys.modules['matplotlib'] = None\n"  # what an environment without the package looks like
    "from wirespeed.cli import main; sys.argv = ['wirespeed'] + sys.argv[1:]; main()\n"
)


def size(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, "size", "azure-lb", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_simulated_missing_matplotlib_prints_the_sizing_then_how_to_add_the_plot(tmp_path):
    png = tmp_path / "p.png"
    out = size("--pool", "10", "--ports", "1024", "--plot", str(png))
    assert out.returncode == 0, out.stderr
    assert out.stdout == size("--pool", "10", "--ports", "1024").stdout  # the whole sizing, as without --plot
    assert out.stderr == (
        f"warning: --plot {png}: not written: matplotlib is not installed in this environment; add it with: "
        f"{install_extra('plot')}\n"
    )
    # Aimed at this interpreter by path, naming the plot extra's requirement from the installed metadata.
    assert f" {sys.executable} " in f" {install_extra('plot')} "
    assert install_extra("plot").endswith(" 'matplotlib>=3.8'")
    assert not png.exists()


def test_simulated_missing_matplotlib_with_json_emits_the_sizing_as_json(tmp_path):
    out = size("--pool", "10", "--ports", "1024", "--json", "--plot", str(tmp_path / "p.png"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == json.loads(size("--pool", "10", "--ports", "1024", "--json").stdout)
    assert out.stderr.startswith("warning: --plot ")


def test_simulated_missing_matplotlib_keeps_exit_2_of_a_plan_that_does_not_fit(tmp_path):
    out = size("--pool", "100:2", "--ports", "4000", "--outbound-ips", "5", "--plot", str(tmp_path / "p.png"))
    assert out.returncode == 2
    assert "Capacity rule" in out.stdout
    warning, error = out.stderr.splitlines()
    assert warning.startswith("warning: --plot ")
    assert error.startswith("error: --outbound-ips 5: ")
