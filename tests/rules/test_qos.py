"""Section 13.1 rules (KG101-KG104): the YAML case table, and KG101 checked against the upstream QoS class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests import load_text
from kubegpu.rules.qos import qos_class
from kubegpu.units import parse_quantity
from kubegpu.workloads import pod_templates
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("qos.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


_VALUES = st.sampled_from([None, "0", "500m", "1", "1000m", "2", "2Gi", "2048Mi", "1Gi"])
_RESOURCES = st.fixed_dictionaries(
    {
        "cpu_request": _VALUES,
        "cpu_limit": _VALUES,
        "memory_request": _VALUES,
        "memory_limit": _VALUES,
    }
)
_CONTAINER = st.tuples(st.sampled_from(["init", "sidecar", "container"]), _RESOURCES)


def _pod(containers: list[tuple[str, dict[str, str | None]]]) -> str:
    init: list[str] = []
    app: list[str] = [
        "  - name: gpu",
        "    image: x:1.0",
        "    resources:",
        "      limits: {cpu: '4', memory: 8Gi, nvidia.com/gpu: 1}",
    ]
    for i, (kind, values) in enumerate(containers):
        lines = [f"  - name: c{i}", "    image: x:1.0"]
        if kind == "sidecar":
            lines.append("    restartPolicy: Always")
        lines.append("    resources:")
        for section in ("request", "limit"):
            entries = [
                f"{name}: '{values[f'{name}_{section}']}'"
                for name in ("cpu", "memory")
                if values[f"{name}_{section}"] is not None
            ]
            lines.append(f"      {section}s: {{{', '.join(entries)}}}")
        (app if kind == "container" else init).extend(lines)
    text = ["apiVersion: v1", "kind: Pod", "metadata: {name: p}", "spec:"]
    if init:
        text += ["  initContainers:", *init]
    return "\n".join([*text, "  containers:", *app]) + "\n"


@given(st.lists(_CONTAINER, max_size=4))
def test_gpu_pod_not_guaranteed_fires_exactly_when_the_pod_is_not_guaranteed(
    containers: list[tuple[str, dict[str, str | None]]],
) -> None:
    # Requests above limits are rejected by the API server and never reach a QoS class; skip them.
    for _kind, v in containers:
        for name in ("cpu", "memory"):
            req, lim = v[f"{name}_request"], v[f"{name}_limit"]
            if req is not None and lim is not None and parse_quantity(req).value > parse_quantity(lim).value:
                return
    text = _pod(containers)
    template = next(pod_templates(load_text("p.yaml", text).documents[0]))
    findings = lint_text("p.yaml", text, LintConfig(select=("KG101",))).findings
    assert bool(findings) == (qos_class(template) != "Guaranteed"), text


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ("{}", "BestEffort"),
        ("{requests: {cpu: '0'}}", "BestEffort"),
        ("{limits: {cpu: '1', memory: 1Gi}}", "Guaranteed"),
        ("{requests: {cpu: 1000m, memory: 1024Mi}, limits: {cpu: '1', memory: 1Gi}}", "Guaranteed"),
        ("{limits: {cpu: '1', memory: 1Gi, hugepages-2Mi: 2Mi}, requests: {hugepages-2Mi: 2Mi}}", "Guaranteed"),
        ("{limits: {nvidia.com/gpu: 1}}", "BestEffort"),
        ("{limits: {cpu: '1', nvidia.com/gpu: 1}}", "Burstable"),
        ("{requests: {cpu: '1', memory: 1Gi}}", "Burstable"),
        ("{requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: '1', memory: 1Gi}}", "Burstable"),
    ],
)
def test_qos_class_follows_the_api_server(resources: str, expected: str) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
    text += f"  - {{name: c, resources: {resources}}}\n"
    assert qos_class(next(pod_templates(load_text("p.yaml", text).documents[0]))) == expected


@pytest.mark.parametrize(
    ("pod_resources", "expected"),
    [
        # API defaulting (defaultPodRequests): the pod-level cpu request is the containers' 100m, not the limit.
        ("{limits: {cpu: '2', memory: 2Gi}}", "Burstable"),
        ("{requests: {cpu: 100m}, limits: {cpu: 100m, memory: 2Gi}}", "Guaranteed"),
        ("{}", "BestEffort"),  # present but empty: ComputePodQOS still reads only the pod level
        ("{requests: {cpu: '1', memory: 2Gi}, limits: {cpu: '2', memory: 2Gi}}", "Burstable"),
        ("{requests: {cpu: '1'}}", "Burstable"),
        ("{limits: {cpu: '2'}}", "Burstable"),
    ],
)
def test_pod_level_resources_alone_decide_the_qos_class(pod_resources: str, expected: str) -> None:
    # The container is Burstable on its own; with spec.resources set, the API server looks only at those.
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
    text += f"  resources: {pod_resources}\n  containers:\n  - {{name: c, resources: {{requests: {{cpu: 100m}}}}}}\n"
    assert qos_class(next(pod_templates(load_text("p.yaml", text).documents[0]))) == expected


_ODD_CPUS = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  containers:\n  - name: train\n"
    "    image: nvcr.io/nvidia/pytorch:24.05-py3\n"
    '    resources: {limits: {cpu: "7", memory: 64Gi, nvidia.com/gpu: 1}}\n'
)


def test_the_smt_level_comes_from_the_command_line_and_the_configuration_file(tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(_ODD_CPUS)
    grace = tmp_path / "grace.toml"
    grace.write_text("[rules.gpu-cpu-not-smt-multiple]\nthreads-per-core = 1\n")
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\n"
        'cpuManagerPolicyOptions: {full-pcpus-only: "true"}\n'
    )
    empty = tmp_path / "empty.toml"
    empty.write_text("")

    def lint(*args: str) -> str:
        result = CliRunner().invoke(app, ["lint", "--select", "KG103", *args, str(manifest)])
        return result.output

    assumed = lint("--config", str(empty))
    assert "2 threads per core assumed for x86 GPU servers" in assumed
    assert "assuming the static CPU manager runs with full-pcpus-only" in assumed
    assert "full-pcpus-only = false" in assumed  # the finding names the node facts it assumed and how to state them
    assert "warning KG103" in assumed
    no_full = tmp_path / "managed.toml"
    no_full.write_text("[rules.gpu-cpu-not-smt-multiple]\nfull-pcpus-only = false\n")
    assert "KG103" not in lint("--config", str(no_full))  # the user says the nodes do not run it: quiet
    stated = tmp_path / "stated.toml"
    stated.write_text("[rules.gpu-cpu-not-smt-multiple]\nfull-pcpus-only = true\n")
    said = lint("--config", str(stated))
    assert "KG103" in said and "assuming the static CPU manager" not in said
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[rules.gpu-cpu-not-smt-multiple]\nfull-pcpus-only = "no"\n')
    assert "full-pcpus-only" in lint("--config", str(wrong)) and "KG103" not in lint("--config", str(wrong))
    assert "KG103" not in lint("--config", str(grace))
    assert "KG103" not in lint("--config", str(empty), "--smt", "1")
    assert "KG103" not in lint("--config", str(empty), "--node", "gb200-nvl72-tray")
    known = lint("--config", str(grace), "--node", "dgx-h100", "--kubelet-config", str(kubelet))
    assert "error KG103" in known and "the node's 2 threads per core: with full-pcpus-only" in known
    # --kubelet-config needs --node on the command line; a Grace profile with full-pcpus-only admits odd counts.
    assert "KG103" not in lint("--config", str(empty), "--node", "gb200-nvl72-tray", "--kubelet-config", str(kubelet))
