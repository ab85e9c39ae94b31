"""TrainJob pods from their runtime: the case table, and the merge of the TrainJob's trainer settings."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.manifests import load_text, pod_templates
from kubegpu.manifests.trainjob import bind_runtime, bound_runtime, find_runtime, templates_with_runtime
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
