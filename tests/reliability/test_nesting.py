"""Deep nesting is one parse error (KG001 / a 400 review), never a RecursionError; fix of a folder goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.fix import FixOptions, fix_text
from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests.loader import MAX_NESTING_DEPTH, nesting_exceeds
from kubegpu.webhook import MalformedReview, WebhookConfig, review

GPU_LIMITS = {"nvidia.com/gpu": 1, "memory": "8Gi", "cpu": "2"}


def nested_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def pod(args: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "deep"},
        "spec": {"containers": [{"name": "a", "image": "b:1", "args": args, "resources": {"limits": GPU_LIMITS}}]},
    }


def deep_text(depth: int, style: str) -> str:
    """A GPU pod whose args nest `depth` lists (flow JSON), or whose env nests `depth` mappings (block YAML)."""
    if style == "json":
        return "".join(
            [
                '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "deep"}, "spec": {"containers": ',
                '[{"name": "a", "image": "b:1", "resources": {"limits": {"nvidia.com/gpu": 1}}, "args": ',
                "[" * depth,
                "]" * depth,
                "}]}}\n",
            ]
        )
    head = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nspec:\n  containers:\n  - name: a\n    image: b:1\n"
        "    resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}\n    env:\n"
    )
    return head + "\n".join(" " * (4 + i) + "k:" for i in range(depth)) + " 1\n"


HOSTILE = [
    (depth, style)
    for depth in (150, 600, 999, 20_000)
    for style in ("json", "yaml")
    if not (style == "yaml" and depth > 999)
]


@pytest.mark.parametrize("depth, style", HOSTILE)
def test_lint_reports_deep_nesting_as_one_parse_error(depth: int, style: str) -> None:
    name = f"deep.{style}"
    result = lint_text(name, deep_text(depth, style), LintConfig())
    assert [f.name for f in result.findings] == ["parse-error"] and result.unreadable
    assert "deeper than" in result.findings[0].message or "nesting depth" in result.findings[0].message


@pytest.mark.parametrize("style", ["json", "yaml"])
def test_nesting_within_the_limit_is_read(style: str) -> None:
    depth = MAX_NESTING_DEPTH - 12  # the pod's own levels above args/env
    result = lint_text(f"ok.{style}", deep_text(depth, style), LintConfig())
    assert not result.unreadable and result.gpu_templates == 1


@pytest.mark.parametrize("text_edits", [True, False])
def test_fix_of_a_deep_but_allowed_document_round_trips(text_edits: bool) -> None:
    text = json.dumps(pod(nested_list(MAX_NESTING_DEPTH - 8)), indent=1)
    outcome = fix_text(
        "ok.json",
        text,
        lambda n, t: lint_text(n, t, LintConfig()).findings,
        FixOptions(unsafe=True, text_edits=text_edits),
    )
    assert outcome.error is None and outcome.changed
    assert json.loads(outcome.fixed)["spec"]["containers"][0]["args"] == nested_list(MAX_NESTING_DEPTH - 8)


@pytest.mark.parametrize("depth, style", HOSTILE)
def test_fix_reports_deep_nesting_as_an_error(depth: int, style: str) -> None:
    text = deep_text(depth, style)
    outcome = fix_text(f"deep.{style}", text, lambda n, t: lint_text(n, t, LintConfig()).findings)
    assert outcome.error is not None and outcome.fixed == text


def test_fix_of_a_folder_goes_on_past_a_deep_file(tmp_path: Path) -> None:
    (tmp_path / "a-deep.json").write_text(deep_text(5000, "json"))
    (tmp_path / "b-deep.yaml").write_text(deep_text(900, "yaml"))
    good = tmp_path / "c-pod.json"
    good.write_text(json.dumps(pod(["x"]), indent=2))
    result = CliRunner().invoke(app, ["fix", "--unsafe-fixes", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "/dev/shm" in good.read_text()
    assert (tmp_path / "a-deep.json").read_text() == deep_text(5000, "json")


def _review(obj: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "namespace": "default",
            "object": obj,
        },
    }


@pytest.mark.parametrize("depth", [150, 999, 50_000])
def test_review_answers_deep_bodies_as_malformed(depth: int) -> None:
    body = json.dumps(_review(pod([]))).replace('"args": []', '"args": ' + "[" * depth + "]" * depth)
    with pytest.raises(MalformedReview, match="deeper than"):
        review(body.encode(), "mutate", WebhookConfig())


def test_review_of_an_allowed_depth_patches() -> None:
    decision = review(json.dumps(_review(pod(nested_list(MAX_NESTING_DEPTH - 8)))).encode(), "mutate", WebhookConfig())
    assert decision.patched


def test_nesting_exceeds_is_iterative() -> None:
    assert nesting_exceeds(nested_list(100_000), 100)
    assert not nesting_exceeds(nested_list(100), 100)
    assert nesting_exceeds(nested_list(101), 100)
