"""The one KubeletConfiguration validator: the kubelet model rejects what ValidateKubeletConfiguration rejects, in
its words, and lint reports each issue at the field it is written at (both read kubegpu.kubelet.validation)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubegpu.errors import KubegpuError
from kubegpu.kubelet import KubeletConfig, KubeletStartupError
from kubegpu.kubelet import validation as kv
from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests import format_path

HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

BAD = [
    ("topologyManagerPolicy: numa\n", kv.TOPOLOGY_POLICY_UNKNOWN, "topologyManagerPolicy"),
    ("topologyManagerScope: node\n", kv.TOPOLOGY_SCOPE_UNKNOWN, "topologyManagerScope"),
    ('reservedSystemCPUs: "0-x"\n', kv.RESERVED_CPUS_INVALID, "reservedSystemCPUs"),
    ('reservedSystemCPUs: "0-1"\nkubeReservedCgroup: /kube\n', kv.RESERVED_CPUS_WITH_CGROUPS, "kubeReservedCgroup"),
    (
        "reservedMemory:\n- numaNode: 0\n  limits: {memory: 0}\n",
        kv.RESERVED_MEMORY_NOT_POSITIVE,
        "reservedMemory[0].limits.memory",
    ),
    (
        "reservedMemory:\n- numaNode: 0\n  limits: {cpu: 1Gi}\n",
        kv.RESERVED_MEMORY_TYPE,
        "reservedMemory[0].limits.cpu",
    ),
    (
        "reservedMemory:\n- numaNode: 0\n  limits: {memory: 1Gi}\n- numaNode: 0\n  limits: {memory: 1Gi}\n",
        kv.RESERVED_MEMORY_DUPLICATE,
        "reservedMemory[1].limits.memory",
    ),
]


@pytest.mark.parametrize(("body", "code", "field"), BAD, ids=[b[1] for b in BAD])
def test_the_model_and_lint_reject_the_same_field(body: str, code: str, field: str) -> None:
    data: dict[str, Any] = yaml.safe_load(HEAD + body)
    issues = [i for i in kv.validate(data) if i.code == code]
    assert [format_path(i.path) for i in issues] == [field]
    message = issues[0].kubelet
    assert message is not None
    with pytest.raises(KubeletStartupError) as caught:
        KubeletConfig.from_dict(data)
    assert message in str(caught.value)
    findings = lint_text("kubelet.yaml", HEAD + body, LintConfig(select=("KG8",))).findings
    assert field in {f.location.dotted_path for f in findings if f.severity.value == "error"}


def test_a_valid_configuration_has_no_issue() -> None:
    data = yaml.safe_load(
        HEAD + "cpuManagerPolicy: static\ncpuManagerPolicyOptions: {full-pcpus-only: 'true'}\n"
        "topologyManagerPolicy: single-numa-node\nsystemReserved: {cpu: '2', memory: 2Gi}\n"
    )
    assert kv.validate(data) == ()
    KubeletConfig.from_dict(data)


def test_start_up_issues_are_not_configuration_validation() -> None:
    """An unknown CPU manager policy passes ValidateKubeletConfiguration and stops the CPU manager at start-up."""
    data = yaml.safe_load(HEAD + "cpuManagerPolicy: Static\n")
    [issue] = kv.validate(data)
    assert (issue.code, issue.kubelet) == (kv.CPU_POLICY_UNKNOWN, None)
    try:
        KubeletConfig.from_dict(data)
    except KubegpuError as err:  # pragma: no cover - the assertion says why
        raise AssertionError(f"configuration validation should pass: {err}") from err
