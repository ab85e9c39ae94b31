"""End-to-end checks of the lint pipeline on small inline manifests."""

from __future__ import annotations

from kubegpu.lint import lint_text

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits:
        cpu: $CPUS
        nvidia.com/gpu: 1
"""


def test_invalid_quantity_is_reported_with_its_line() -> None:
    result = lint_text("pod.yaml", POD)
    found = [f for f in result.findings if f.name == "invalid-quantity"]
    assert len(found) == 1
    assert found[0].location.line == 11
    assert found[0].location.dotted_path == "spec.containers[0].resources.limits.cpu"


def test_guaranteed_pod_with_shm_has_no_qos_or_shm_findings() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: ok}
spec:
  volumes:
  - name: dshm
    emptyDir: {medium: Memory, sizeLimit: 8Gi}
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
    volumeMounts: [{name: dshm, mountPath: /dev/shm}]
    resources:
      limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: 1}
"""
    names = {f.name for f in lint_text("ok.yaml", text).findings}
    assert not names & {"gpu-pod-not-guaranteed", "dshm-missing", "dshm-unsized", "gpu-cpu-not-integer"}
