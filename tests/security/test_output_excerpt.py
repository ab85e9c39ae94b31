"""Source excerpts in the text report: a window around the column of a long line, shown once for the findings
on it. A one-line JSON List of 100 GPU pods (a 200 KB line) printed the whole line per finding (56 MB)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kubegpu.lint import LintConfig, lint_paths
from kubegpu.report.findings_text import EXCERPT_WIDTH, excerpt, excerpt_window, write_text

PODS = 100


def _one_line_list(path: Path) -> Path:
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"train-{i}", "annotations": {"notes": "x" * 1800}},
            "spec": {
                "containers": [
                    {
                        "name": "trainer",
                        "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                        "resources": {"limits": {"nvidia.com/gpu": 8}},
                    }
                ]
            },
        }
        for i in range(PODS)
    ]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    return path


def _excerpts(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("    ") and " | " in line[:14]]


def test_a_long_line_is_shown_as_a_window_per_group_of_findings(tmp_path: Path) -> None:
    source = _one_line_list(tmp_path / "pods.json")
    assert source.stat().st_size > 190_000
    result = lint_paths([str(source)], LintConfig())
    assert len(result.findings) >= 2 * PODS
    parts: list[str] = []
    write_text(result, parts.append)
    report = "".join(parts)
    excerpts = _excerpts(report)
    # Each pod's findings sit within one window: one excerpt per pod, never one per finding.
    assert len(excerpts) == PODS
    assert all(len(line) <= len("        1 | ") + EXCERPT_WIDTH + 2 * len("...") for line in excerpts)
    assert all(line.startswith("        1 | ...") and line.endswith("...") for line in excerpts)
    assert all('{"name": "trainer"' in line for line in excerpts)  # the window holds what the findings point at
    # The report grows with the findings, not with the line: well under a kilobyte per finding.
    assert len(report) < 1000 * len(result.findings)


def test_a_short_line_is_shown_whole_once_after_its_findings(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - {name: c, image: 'nvcr.io/nvidia/pytorch:24.05-py3', resources: {limits: {nvidia.com/gpu: 1}}}\n"
    )
    result = lint_paths([str(path)], LintConfig())
    on_line_6 = [f for f in result.findings if f.location.line == 6]
    assert len(on_line_6) >= 2
    parts: list[str] = []
    write_text(result, parts.append)
    lines = "".join(parts).splitlines()
    excerpts = _excerpts("\n".join(lines))
    assert excerpts == [
        "        6 |   - {name: c, image: 'nvcr.io/nvidia/pytorch:24.05-py3', resources: {limits: {nvidia.com/gpu: 1}}}"
    ]
    # after the last finding on the line, not between them
    last_finding = max(i for i, line in enumerate(lines) if line.startswith("  6:"))
    assert lines.index(excerpts[0]) > last_finding


@given(st.integers(0, 5000), st.integers(1, 6000))
def test_the_window_holds_the_column_and_fits(length: int, column: int) -> None:
    start, end = excerpt_window(length, column)
    assert 0 <= start <= end <= length and end - start <= EXCERPT_WIDTH
    if length <= EXCERPT_WIDTH:
        assert (start, end) == (0, length)
    elif column <= length:
        assert start < column <= end
    line = "y" * length
    shown = excerpt(line, (start, end))
    assert len(shown) <= EXCERPT_WIDTH + 6
    assert shown.startswith("...") == (start > 0) and shown.endswith("...") == (end < length)
