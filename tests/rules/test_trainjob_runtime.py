"""TrainJob pods from their runtime: the case table, and the merge of the TrainJob's trainer settings."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.manifests import load_text
from kubegpu.workloads import pod_templates
from kubegpu.workloads.trainjob import bind_runtime, bound_runtime, find_runtime, templates_with_runtime
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("trainjob_runtime.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: rt}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}
          spec:
            template:
              spec:
                containers: [{name: dataset-initializer, image: "ghcr.io/kubeflow/trainer/dataset-initializer:v2"}]
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              metadata: {labels: {team: a}}
              spec:
                initContainers: [{name: wait, image: "busybox:1.36"}]
                containers:
                - name: node
                  image: old:1
                  command: [old]
                  env: [{name: A, value: runtime}, {name: B, value: runtime}]
                  resources: {requests: {cpu: "4"}, limits: {cpu: "4", memory: 8Gi}}
                - name: sidecar
                  image: "envoy:1.30"
"""
_JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: rt}
  trainer:
    image: new:2
    args: [--epochs, "3"]
    env: [{name: B, value: job}, {name: C, value: job}]
    resourcesPerNode: {limits: {memory: 16Gi, nvidia.com/gpu: 8}}
"""


def test_the_trainer_node_container_takes_the_trainjob_settings() -> None:
    runtime, job = load_text("t.yaml", _RUNTIME + "---\n" + _JOB).documents
    assert find_runtime(job, lambda kind: [runtime] if kind == runtime.kind else []) is runtime
    (trainer,) = templates_with_runtime(job, runtime)  # the initializer runs before: not a trainer pod
    assert trainer.role == "trainer" and trainer.replicas == 2 and trainer.labels == {"team": "a"}
    node, sidecar = [c for c in trainer.containers if c.kind == "container"]
    assert [c.name for c in trainer.containers if c.kind == "init"] == ["wait"]
    assert node.path == ("spec", "trainer") and sidecar.path == ("spec", "runtimeRef")
    assert node.data["image"] == "new:2" and node.data["command"] == ["old"] and node.data["args"] == ["--epochs", "3"]
    assert node.data["env"] == [
        {"name": "A", "value": "runtime"},
        {"name": "B", "value": "job"},
        {"name": "C", "value": "job"},
    ]
    assert node.data["resources"] == {
        "requests": {"cpu": "4"},
        "limits": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": 8},
    }
    assert sidecar.data["image"] == "envoy:1.30"


def test_binding_replaces_the_trainjob_pod_templates() -> None:
    runtime, job = load_text("t.yaml", _RUNTIME + "---\n" + _JOB).documents
    assert bound_runtime(job) is None
    assert [t.path for t in pod_templates(job)] == [("spec", "trainer")]  # the trainer block alone
    bind_runtime(job, runtime)
    assert bound_runtime(job) is runtime
    assert [len(t.containers) for t in pod_templates(job)] == [3]


_PATCHES = """\
  runtimePatches:
  - manager: example.com/first
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              metadata: {labels: {patched: "yes"}}
              spec:
                template:
                  metadata: {labels: {kueue.x-k8s.io/queue-name: gpu}}
                  spec:
                    nodeSelector: {a: "1", c: "1"}
                    tolerations: [{key: first, operator: Exists}]
                    volumes: [{name: dshm, emptyDir: {medium: Memory}}]
                    initContainers: [{name: wait, securityContext: {runAsUser: 1000}}]
                    containers:
                    - name: sidecar
                      env: [{name: S, value: "1"}]
                      volumeMounts: [{name: dshm, mountPath: /dev/shm}]
                      resources: {limits: {cpu: "64"}}
                    - {name: ghost, env: [{name: G, value: "1"}]}
  - manager: example.com/second
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    nodeSelector: {a: "3", b: "2"}
                    tolerations: [{key: second, operator: Exists}]
                    containers:
                    - name: sidecar
                      volumeMounts: [{name: cache, mountPath: /dev/shm}, {name: data, mountPath: /data}]
"""


def test_runtime_patches_merge_in_order_by_their_keys() -> None:
    runtime, job = load_text("t.yaml", _RUNTIME + "---\n" + _JOB + _PATCHES).documents
    (trainer,) = templates_with_runtime(job, runtime)
    # the job metadata patch keeps its ancestor label (still the trainer); pod template labels merge
    assert trainer.role == "trainer" and trainer.labels == {"team": "a", "kueue.x-k8s.io/queue-name": "gpu"}
    # patches apply in list order (kubeflow/trainer pkg/runtime/core/trainingruntime_test.go, "duplicate patches
    # for same job" and "targeting the same job with different values"): maps merge key by key, the later value
    # wins; tolerations, a list without a merge key, are replaced by the later patch
    assert trainer.spec["nodeSelector"] == {"a": "3", "c": "1", "b": "2"}
    assert trainer.spec["tolerations"] == [{"key": "second", "operator": "Exists"}]
    assert trainer.spec["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    (wait,) = [c for c in trainer.containers if c.kind == "init"]
    assert wait.data == {"name": "wait", "image": "busybox:1.36", "securityContext": {"runAsUser": 1000}}
    # containers merge by name, and only the names the runtime has (a patch of 'ghost' is rejected upstream)
    node, sidecar = [c for c in trainer.containers if c.kind == "container"]
    assert [c.data["name"] for c in (node, sidecar)] == ["node", "sidecar"]
    assert sidecar.data["env"] == [{"name": "S", "value": "1"}]
    # volumeMounts merge by mountPath: the second patch's /dev/shm mount replaces the first's
    assert sidecar.data["volumeMounts"] == [
        {"name": "cache", "mountPath": "/dev/shm"},
        {"name": "data", "mountPath": "/data"},
    ]
    assert "resources" not in sidecar.data  # not a patchable field: the API server prunes it
    # the trainer settings still apply to the node container after the patches
    assert node.data["image"] == "new:2" and node.data["resources"]["limits"]["nvidia.com/gpu"] == 8


def test_a_trainjob_without_runtime_patches_keeps_the_runtime_pod() -> None:
    runtime, job = load_text("t.yaml", _RUNTIME + "---\n" + _JOB).documents
    (trainer,) = templates_with_runtime(job, runtime)
    assert "nodeSelector" not in trainer.spec and "volumes" not in trainer.spec
    assert trainer.labels == {"team": "a"}
