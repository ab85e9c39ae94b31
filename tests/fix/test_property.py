"""Property test: random GPU workloads with comments everywhere, random indentation and flow style, and random
fixable defects -> fix -> comments kept, objects unchanged outside the touched paths, a second fix is a no-op."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubegpu.fix import FixOptions, fix_text
from kubegpu.manifests import load_text
from tests.fix.helpers import (
    comment_lines,
    inline_comments,
    linter,
    schema_errors,
    strip_paths,
    touched_by_document,
)

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz -_:", min_size=1, max_size=20).map(str.strip).filter(bool)


class _Writer:
    """A tiny block-YAML writer that sprinkles comments and honours an indentation style."""

    def __init__(self, draw: Any, mapping: int, offset: int) -> None:
        self.draw = draw
        self.mapping = mapping
        self.offset = offset
        self.lines: list[str] = []

    def comment(self, indent: int) -> None:
        if self.draw(st.integers(0, 5)) == 0:
            self.lines.append(" " * indent + "# " + self.draw(WORDS))

    def inline(self) -> str:
        return "  # " + self.draw(WORDS) if self.draw(st.integers(0, 4)) == 0 else ""

    def mapping_block(self, data: dict[str, Any], indent: int, first_prefix: str = "") -> None:
        for n, (key, value) in enumerate(data.items()):
            lead = first_prefix if n == 0 and first_prefix else " " * indent
            if not (n == 0 and first_prefix):
                self.comment(indent)
            if isinstance(value, _Flow):
                self.lines.append(f"{lead}{key}: {value.text}{self.inline()}")
            elif isinstance(value, dict):
                self.lines.append(f"{lead}{key}:{self.inline()}")
                self.mapping_block(value, indent + self.mapping)
            elif isinstance(value, list):
                self.lines.append(f"{lead}{key}:{self.inline()}")
                self.sequence_block(value, indent + self.offset)
            else:
                self.lines.append(f"{lead}{key}: {value}{self.inline()}")

    def sequence_block(self, items: list[Any], indent: int) -> None:
        for item in items:
            self.comment(indent)
            if isinstance(item, dict):
                self.mapping_block(item, indent + 2, first_prefix=" " * indent + "- ")
            else:
                self.lines.append(" " * indent + f"- {item}{self.inline()}")


class _Flow:
    def __init__(self, text: str) -> None:
        self.text = text


@st.composite
def workloads(draw: Any) -> str:
    kind = draw(st.sampled_from(["Pod", "Deployment", "Job"]))
    containers = []
    for i in range(draw(st.integers(1, 2))):
        gpus = draw(st.integers(1, 8))
        limits: dict[str, Any] = {"cpu": f'"{draw(st.integers(1, 64))}"'}
        if draw(st.booleans()):
            limits["memory"] = f"{draw(st.integers(1, 512))}Gi"
        requests: dict[str, Any] = {}
        if draw(st.booleans()):
            limits["nvidia.com/gpu"] = gpus
        else:
            requests["nvidia.com/gpu"] = gpus  # defect: GPU request without a limit
        resources: dict[str, Any] = {}
        if requests:
            resources["requests"] = requests
        if draw(st.booleans()):
            resources["limits"] = _Flow("{" + ", ".join(f"{k}: {v}" for k, v in limits.items()) + "}")
        else:
            resources["limits"] = limits
        container: dict[str, Any] = {
            "name": f"c{i}",
            "image": "nvcr.io/nvidia/pytorch:24.05-py3",
            "resources": resources,
        }
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers}
    shm = draw(st.sampled_from(["none", "unsized", "ok"]))
    if shm != "none":
        empty_dir = {"medium": "Memory"} | ({"sizeLimit": "1Gi"} if shm == "ok" else {})
        spec["volumes"] = [{"name": "dshm", "emptyDir": empty_dir}]
        for c in containers:
            c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if draw(st.booleans()):
        spec["restartPolicy"] = "Never" if kind != "Deployment" else "Always"
    body: dict[str, Any] = {
        "apiVersion": "v1" if kind == "Pod" else ("apps/v1" if kind == "Deployment" else "batch/v1"),
        "kind": kind,
        "metadata": {"name": "w", "labels": {"app": "w"}},
    }
    if kind == "Pod":
        body["spec"] = spec
    else:
        template = {"metadata": {"labels": {"app": "w"}}, "spec": spec}
        body["spec"] = (
            {"template": template}
            if kind == "Job"
            else {"selector": {"matchLabels": {"app": "w"}}, "template": template}
        )
    writer = _Writer(draw, draw(st.sampled_from([2, 4])), draw(st.sampled_from([0, 2])))
    writer.comment(0)
    writer.mapping_block(body, 0)
    writer.comment(0)
    return "\n".join(writer.lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=workloads(), unsafe=st.booleans(), text_edits=st.booleans())
def test_random_workloads_keep_the_invariants(text: str, unsafe: bool, text_edits: bool) -> None:
    lint = linter()
    options = FixOptions(unsafe=unsafe, text_edits=text_edits)
    outcome = fix_text("w.yaml", text, lint, options)
    assert outcome.error is None
    assert not comment_lines(text) - comment_lines(outcome.fixed)
    # Trailing comments too, except those on lines a fix rewrote, which it removes and reports.
    dropped = Counter(d for a in outcome.applied for d in a.dropped_comments)
    assert not inline_comments(text) - inline_comments(outcome.fixed) - dropped
    before = load_text("w.yaml", text)
    after = load_text("w.yaml", outcome.fixed)
    touched = touched_by_document(outcome.applied, before.documents)
    for old, new in zip(before.documents, after.documents, strict=True):
        paths = touched.get(old.index, [])
        assert strip_paths(old.data, paths) == strip_paths(new.data, paths)
        if paths and schema_errors(old.data) is None:
            assert schema_errors(new.data) is None
    again = fix_text("w.yaml", outcome.fixed, lint, options)
    assert again.fixed == outcome.fixed
