"""Every citation stays inside this repository: the field reports are cited by title, publisher and URL
(docs/references.md, wirespeed.references), never by the folder of source documents the project was started from,
which a reader of this repository does not have."""

from __future__ import annotations

import re
import subprocess

from conftest import ROOT
from wirespeed.references import REPORTS

REFERENCES = ROOT / "docs" / "references.md"
# The source folder's path (built from parts so this file does not match itself), and a report cited by its
# number there: the word seed or seeds, a space or a slash, three digits.
SOURCE_FOLDER = "shared/" + "seeds"
OUTSIDE = re.compile(re.escape(SOURCE_FOLDER) + r"|\bseeds?[ /]+\d{3}\b", re.IGNORECASE)
# Notes and folders beside the repository on the machine it was written on, which a reader does not have either:
# the reference notes (by folder, by a relative path, or by their file names) and the machine's work folder. The
# work folder counts only as the start of a path, so a recorded CI path such as /home/runner/work/... does not match.
BESIDE = re.compile(
    "|".join(
        (
            re.escape("shared/" + "reference"),
            re.escape("../" + "shared"),
            r"(?<![\w.~-])/" + "work/",
            r"\b(?:network|pulumi)-" + r"facts\b",
            r"\bhouse-" + r"style\.md\b",
        )
    )
)


def _tracked_text_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    return [name for name in listed if name and (ROOT / name).is_file()]


def test_no_tracked_file_cites_the_source_folder_or_a_report_by_its_number():
    offending = []
    for name in _tracked_text_files():
        try:
            text = (ROOT / name).read_text()
        except UnicodeDecodeError:
            continue  # binary: no citation to read
        offending += [
            f"{name}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)
        ]
    assert offending == [], "cite the report by title and publisher (docs/references.md) instead:\n" + "\n".join(
        offending
    )


def test_no_tracked_file_points_at_a_path_beside_the_repository():
    offending = []
    for name in _tracked_text_files():
        try:
            text = (ROOT / name).read_text()
        except UnicodeDecodeError:
            continue  # binary: no path to read
        offending += [
            f"{name}:{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if BESIDE.search(line)
        ]
    assert offending == [], (
        "cite the public source (vendor page, upstream file with repository, path and tag) or the in-repo test or "
        "bench that observed it instead:\n" + "\n".join(offending)
    )


def test_the_beside_pattern_catches_each_old_form_and_spares_recorded_ci_paths():
    folder, notes, work = "shared/" + "reference", "network-" + "facts.md", "/" + "work/"
    for old in (
        f"see {folder}/{notes}",
        f'({notes}, "Linux")',
        f"// {work}{folder}/pulumi-" + "facts.md",
        f"../{'shared'}/{folder.split('/')[1]}/house-" + "style.md",
        f"pulumi-{'facts'}.md saw 9.5 min",
        f"pulumi-{'facts'} and network-{'facts'}",
    ):
        assert BESIDE.search(old), old
    for legit in (
        "project:///../../../../home/runner/work/pulumi-eks/pulumi-eks/nodejs/eks/cluster.ts#782,30",
        "network-facing facts",
        "docs/references.md",
    ):
        assert not BESIDE.search(legit), legit


def test_the_pattern_catches_each_old_form():
    # Numbers as fields, so that this file's own text does not match.
    zero, two, four = "000", "002", "004"
    for old in (
        f"(`{SOURCE_FOLDER}/{zero}`)",
        f"(seed {zero})",
        f"seeds {two}, 003",
        f"Seed {four} (ASOS)",
        f"(`seeds/{four}`)",
    ):
        assert OUTSIDE.search(old), old
    for legit in ("random.Random(seed)", "the input is now a seed", "uv venv --seed", "seed_seconds"):
        assert not OUTSIDE.search(legit), legit


def test_the_references_page_lists_every_report_by_id_title_publisher_and_url():
    text = REFERENCES.read_text()
    rows = {row[0].strip("|` "): row for row in (line.split(" | ") for line in text.splitlines()) if len(row) == 4}
    for report in REPORTS:
        assert report.id in rows, f"{REFERENCES.name} has no row for {report.id}"
        row = rows[report.id]
        assert row[1].startswith(report.title), (report.id, row[1])
        assert row[2].startswith(report.publisher.split()[0]), (report.id, row[2])
        assert row[3].rstrip(" |") == report.url, (report.id, row[3])


def test_every_reference_id_cited_in_the_docs_is_listed():
    ids = {report.id for report in REPORTS}
    cited = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        cited |= set(
            re.findall(r"\[(?:`)?([a-z]+(?:-[a-z]+)+)(?:`)?\]\((?:\.\./)*docs/references\.md", path.read_text())
        )
    assert cited <= ids, f"cited but not in docs/references.md: {sorted(cited - ids)}"
    assert cited, "the README or docs cite no report: the collector is broken"
