"""/dev/shm rules (KG201-KG203): the YAML case table, and the size the fixes derive from the memory limit."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import kubegpu.manifests.pod as podmodel
from kubegpu.errors import ConfigError
from kubegpu.fix import FixOptions, fix_text
from kubegpu.lint import Finding, LintConfig, lint_text
from kubegpu.manifests import load_text
from kubegpu.manifests.resources import template_pod
from kubegpu.rules.shm import GI, MI, _pod_memory_limit, shm_size_for, shm_size_text
from kubegpu.units import parse_quantity
from kubegpu.workloads import pod_templates
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("shm.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


@given(st.integers(2 * MI, 4096 * GI))
def test_the_derived_size_is_at_most_half_the_limit_and_written_exactly(limit: int) -> None:
    size = shm_size_for(limit)
    assert MI <= size <= limit // 2
    assert parse_quantity(shm_size_text(limit)).value == size
    # Whole GiB once the pod has at least 2 GiB; never less than half a GiB below the exact half.
    assert limit // 2 - size < (GI if limit >= 2 * GI else MI)


@given(st.sampled_from(["512Mi", "1Gi", "1536Mi", "3Gi", "100Gi", "1000M"]))
def test_the_dshm_fix_never_leaves_an_unsized_or_oversized_volume(memory: str) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x:1.0\n"
        f"    resources: {{limits: {{memory: {memory}, nvidia.com/gpu: 1}}}}\n"
    )

    def lint(name: str, body: str) -> list[Finding]:
        return lint_text(name, body, LintConfig(select=("KG2",))).findings

    outcome = fix_text("p.yaml", text, lint, FixOptions(unsafe=False))
    assert outcome.error is None
    assert [f.name for f in lint("p.yaml", outcome.fixed)] == []


_SIZES = st.one_of(st.none(), st.integers(1, 4096).map(lambda n: f"{n}Mi"), st.sampled_from(["64Mi", "65Mi", "129Mi"]))


@st.composite
def _shm_pods(draw: Any) -> str:
    """A GPU pod with a random memory limit (or none), and maybe a disk or memory emptyDir of a random size mounted
    at /dev/shm or elsewhere, or not mounted at all."""
    memory = draw(_SIZES)
    limits = f"{{cpu: '4', nvidia.com/gpu: 1{', memory: ' + memory if memory else ''}}}"
    volume = ""
    mount = ""
    shape = draw(st.sampled_from(["none", "disk-at-shm", "memory-at-shm", "memory-unused", "memory-elsewhere"]))
    if shape != "none":
        size = draw(_SIZES)
        fields = [
            *(["medium: Memory"] if shape.startswith("memory") else []),
            *([f"sizeLimit: {size}"] if size else []),
        ]
        volume = f"  volumes:\n  - name: v\n    emptyDir: {{{', '.join(fields)}}}\n"
        if shape.endswith("at-shm"):
            mount = "    volumeMounts: [{name: v, mountPath: /dev/shm}]\n"
        elif shape == "memory-elsewhere":
            mount = "    volumeMounts: [{name: v, mountPath: /scratch}]\n"
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + volume + "  containers:\n  - name: c\n"
        f"    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources: {{limits: {limits}}}\n" + mount
    )


def _shm_of(text: str) -> tuple[Any, int | None]:
    """The volume mounted at /dev/shm in the pod's one container (or None) and the pod's memory limit in bytes."""
    data = yaml.safe_load(text)
    spec = data["spec"]
    container = spec["containers"][0]
    memory = container["resources"]["limits"].get("memory")
    name = next((m["name"] for m in container.get("volumeMounts", []) if m["mountPath"] == "/dev/shm"), None)
    volume = next((v for v in spec.get("volumes", []) if v["name"] == name), None)
    return volume, None if memory is None else parse_quantity(memory).ceil


@settings(max_examples=150, derandomize=True)
@given(_shm_pods())
def test_the_fixes_never_leave_dev_shm_at_or_below_the_64_mib_default(text: str) -> None:
    def lint(name: str, body: str) -> list[Finding]:
        return lint_text(name, body, LintConfig(select=("KG2",))).findings

    outcome = fix_text("p.yaml", text, lint, FixOptions(unsafe=True))
    assert outcome.error is None
    before, _memory = _shm_of(text)
    after, memory = _shm_of(outcome.fixed)
    if after == before:
        return  # the fixes did not touch /dev/shm (no fix, or nothing to fix)
    assert after is not None and after["emptyDir"]["medium"] == "Memory", outcome.fixed
    raw = after["emptyDir"].get("sizeLimit")
    bounds = [b for b in (None if raw is None else parse_quantity(raw).ceil, memory) if b is not None]
    # The tmpfs is the sizeLimit, capped by the pod's memory limit; with neither it is the node's memory.
    assert not bounds or min(bounds) > 64 * MI, outcome.fixed


def _sized(memory: str | None, volume: str = "", option: Any = "8Gi") -> list[Finding]:
    limits = f"{{limits: {{memory: {memory}, nvidia.com/gpu: 1}}}}" if memory else "{limits: {nvidia.com/gpu: 1}}"
    mounts = "    volumeMounts: [{name: shm, mountPath: /dev/shm}]\n" if volume else ""
    volumes = f"  volumes: [{{name: shm, emptyDir: {volume}}}]\n" if volume else ""
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x:1.0\n"
        f"    resources: {limits}\n{mounts}{volumes}"
    )
    options = {rule: {"size-limit": option} for rule in ("dshm-missing", "dshm-unsized")}
    return lint_text("p.yaml", text, LintConfig(select=("KG201", "KG202"), options=options)).findings


def _sizes(findings: list[Finding]) -> list[Any]:
    """The /dev/shm volumes the fixes add and the sizeLimits they set."""
    out: list[Any] = []
    for edit in (e for f in findings if f.fix is not None for e in f.fix.edits):
        value = edit.value[0] if isinstance(edit.value, list) else edit.value
        if (isinstance(value, dict) and "emptyDir" in value) or edit.path[-1] == "sizeLimit":
            out.append(value)
    return out


def test_the_size_limit_option_replaces_half_the_memory_limit() -> None:
    """`gen dshm --size` sets this option: the size given, with or without a memory limit, never above it."""
    [added] = _sized("64Gi")
    assert added.fix is not None and "8Gi memory-backed emptyDir at /dev/shm (the size given)" in added.fix.description
    assert _sizes([added]) == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]
    [no_limit] = _sized(None)
    assert _sizes([no_limit]) == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]
    [unsized] = _sized("64Gi", "{medium: Memory}")
    assert unsized.code == "KG202" and _sizes([unsized]) == ["8Gi"]
    [over] = _sized("4Gi")
    assert over.fix is None and "(8Gi) is above the pod's memory limit (4Gi)" in over.message
    [over_unsized] = _sized("4Gi", "{medium: Memory}")
    assert over_unsized.fix is None and "(8Gi) is above the pod's memory limit (4Gi)" in over_unsized.message


@pytest.mark.parametrize(
    ("option", "why"),
    [("64Mi", "not above 64Mi"), ("1Mi", "not above 64Mi"), ("lots", "not a quantity"), (True, "a boolean")],
)
def test_a_size_limit_option_at_or_below_the_default_is_refused(option: Any, why: str) -> None:
    """The configuration is refused when it is built, not read as "not given" by the rule."""
    with pytest.raises(
        ConfigError, match=rf"\[rules.dshm-missing\] size-limit: expected a quantity above 64Mi.*\({why}\)"
    ):
        _sized("64Gi", option=option)


_MEMORY = st.sampled_from([None, "512Mi", "1Gi", "3Gi", "6Gi"])


@st.composite
def _pods(draw: st.DrawFn) -> str:
    """A GPU pod with init containers, sidecars and app containers, each with or without a memory limit."""

    def container(name: str, sidecar: bool) -> str:
        memory = draw(_MEMORY)
        limits = f"{{nvidia.com/gpu: 1{', memory: ' + memory if memory else ''}}}"
        policy = ", restartPolicy: Always" if sidecar else ""
        return f"  - {{name: {name}, image: i{policy}, resources: {{limits: {limits}}}}}\n"

    inits = [container(f"i{i}", draw(st.booleans())) for i in range(draw(st.integers(0, 3)))]
    apps = [container(f"a{i}", False) for i in range(draw(st.integers(1, 3)))]
    pod_level = draw(_MEMORY)
    resources = f"  resources: {{limits: {{memory: {pod_level}}}}}\n" if pod_level else ""
    init_text = "  initContainers:\n" + "".join(inits) if inits else ""
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        + resources
        + init_text
        + "  containers:\n"
        + "".join(apps)
    )


@given(_pods())
def test_the_pod_memory_limit_is_podlimits_memory(text: str) -> None:
    """The memory limit the fixes size /dev/shm from is PodLimits' memory (pod-level, else containers summed, init
    containers a maximum), and None when a running container has no memory limit."""
    template = next(pod_templates(load_text("p.yaml", text).documents[0]))
    model = template_pod(template)
    expected: int | None
    if model.resources is not None and "memory" in model.resources.limits:
        expected = podmodel.canonical("memory", model.resources.limits["memory"])
    elif any(c.kind != podmodel.KIND_INIT and "memory" not in c.limits for c in model.containers):
        expected = None
    else:
        memory = podmodel.pod_limits(model, overhead=False).get("memory")
        expected = None if memory is None else podmodel.canonical("memory", memory)
    assert _pod_memory_limit(template) == expected
