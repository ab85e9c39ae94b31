"""fix reads every line ending lint reads: CR-only (old Mac), CRLF, mixed, and YAML's Unicode line breaks."""

from __future__ import annotations

import json

import pytest
import yaml

from kubegpu.fix import FixOptions, fix_text
from kubegpu.lint import LintConfig, lint_text

POD = [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    "  name: p",
    "spec:",
    "  containers:",
    "  - name: a",
    "    image: b:1",
    "    resources:",
    "      limits: {nvidia.com/gpu: 1, memory: 8Gi}",
    "",
]


def _fix(text: str, text_edits: bool = True) -> str:
    outcome = fix_text(
        "p.yaml",
        text,
        lambda n, t: lint_text(n, t, LintConfig()).findings,
        FixOptions(unsafe=True, text_edits=text_edits),
    )
    assert outcome.error is None
    return outcome.fixed


@pytest.mark.parametrize("text_edits", [True, False])
@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_fix_keeps_a_files_line_ending(newline: str, text_edits: bool) -> None:
    fixed = _fix(newline.join(POD), text_edits)
    assert "/dev/shm" in fixed
    other = {"\r": ["\n"], "\r\n": [], "\n": ["\r"]}[newline]
    assert all(o not in fixed.replace("\r\n", "") for o in other)
    pod = yaml.safe_load(fixed)
    assert pod["spec"]["volumes"][0]["emptyDir"]["medium"] == "Memory"


@pytest.mark.parametrize("text_edits", [True, False])
@pytest.mark.parametrize("breaks", [("\r", "\n"), ("\n", "\r"), ("\u2028", "\n"), ("\x85", "\n"), ("\r\n", "\r")])
def test_fix_survives_mixed_line_breaks(breaks: tuple[str, str], text_edits: bool) -> None:
    first, rest = breaks
    text = first.join(POD[:4]) + first + rest.join(POD[4:])
    want = yaml.safe_load(text)
    fixed = _fix(text, text_edits)
    got = yaml.safe_load(fixed)
    want["spec"].pop("volumes", None)
    got["spec"].pop("volumes", None)
    got["spec"]["containers"][0].pop("volumeMounts", None)
    assert got == want


def test_fix_of_cr_only_json() -> None:
    limits = {"nvidia.com/gpu": 1, "memory": "8Gi"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "b:1", "resources": {"limits": limits}}]},
    }
    text = "\r".join(json.dumps(pod, indent=2).split("\n"))
    outcome = fix_text("p.json", text, lambda n, t: lint_text(n, t, LintConfig()).findings, FixOptions(unsafe=True))
    assert outcome.error is None and "/dev/shm" in outcome.fixed
