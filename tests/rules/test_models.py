"""Section 13.4 rules: the YAML case table, plus the cache-path and mount helpers they rest on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.manifests import format_path
from kubegpu.rules import LintConfig, lint_text
from kubegpu.rules.models import MountView, hf_cache_dir, mount_for

TABLE = yaml.safe_load((Path(__file__).parent / "cases" / "models.yaml").read_text())


def _expected(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [] if case["expect"] == "none" else list(case["expect"])


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_case(case: dict[str, Any]) -> None:
    config = LintConfig(select=tuple(case.get("select", TABLE["select"])))
    result = lint_text(f"{case['name']}.yaml", case["manifest"], config)
    got = sorted((f.name, f.location.line, f.location.dotted_path) for f in result.findings)
    want = sorted((e["rule"], e["line"], e["path"]) for e in _expected(case))
    assert got == want, [f.message for f in result.findings]
    for entry in _expected(case):
        key = (entry["rule"], entry["line"], entry["path"])
        finding = next(f for f in result.findings if (f.name, f.location.line, f.location.dotted_path) == key)
        if "severity" in entry:
            assert finding.severity.value == entry["severity"]
        if "fix" not in entry:
            continue
        if entry["fix"] is None:
            assert finding.fix is None
            continue
        assert finding.fix is not None
        assert finding.fix.safety.value == entry["fix"]["safety"]
        assert [[e.op, format_path(e.path), e.value] for e in finding.fix.edits] == entry["fix"]["edits"]


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "/root/.cache/huggingface/hub"),
    ({"HF_HOME": "/cache/"}, "/cache/hub"),
    ({"HF_HOME": "/a", "HF_HUB_CACHE": "/b"}, "/b"),
    ({"HUGGINGFACE_HUB_CACHE": "/c", "HF_HOME": "/a"}, "/c"),
    ({"XDG_CACHE_HOME": "/x"}, "/x/huggingface/hub"),
    ({"HF_HOME": "$(CACHE)"}, None),
])
def test_hf_cache_dir_follows_huggingface_hub_precedence(env: dict[str, str], expected: str | None) -> None:
    assert hf_cache_dir(env, "/root") == expected


def _view(index: int, path: str) -> MountView:
    return MountView(index, {"name": f"v{index}", "mountPath": path}, path.rstrip("/") or "/", None, None)


def test_deepest_mount_wins() -> None:
    views = [_view(0, "/data"), _view(1, "/data/hub"), _view(2, "/datax")]
    assert mount_for(views, "/data/hub/models--x").index == 1  # type: ignore[union-attr]
    assert mount_for(views, "/data/other").index == 0  # type: ignore[union-attr]
    assert mount_for(views, "/dat") is None
    assert mount_for(views, "/datax/y").index == 2  # type: ignore[union-attr]


@given(st.lists(st.from_regex(r"(/[a-z]{1,3}){1,3}", fullmatch=True), min_size=1, max_size=5),
       st.from_regex(r"(/[a-z]{1,3}){1,4}", fullmatch=True))
def test_mount_for_returns_a_prefix_mount(paths: list[str], target: str) -> None:
    views = [_view(i, p) for i, p in enumerate(paths)]
    found = mount_for(views, target)
    holders = [v for v in views if target == v.mount_path or target.startswith(v.mount_path + "/")]
    if not holders:
        assert found is None
    else:
        assert found is not None and len(found.mount_path) == max(len(v.mount_path) for v in holders)


def test_scale_to_zero_message_names_the_target_and_the_default() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers: [{name: v, image: "vllm/vllm-openai:v0.8.5", resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: so}
spec:
  scaleTargetRef: {name: vllm}
"""
    [finding] = lint_text("k.yaml", text, LintConfig(select=("KG403",))).findings
    assert "KEDA's default is 0" in finding.message and "Deployment 'vllm'" in finding.message
    assert finding.obj is not None and finding.obj.kind == "ScaledObject"
