"""Input readers: openb CSVs, cluster specs, job manifests; bad input is one InputError with a place."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.sim.cluster_spec import BLOCK, RACK, load_cluster_spec
from kubegpu.sim.traces.openb import read_nodes, read_pods
from kubegpu.sim.workload import load_job_manifests, synthetic_jobs


def test_openb_bad_integer_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "pods.csv"
    bad.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,10,1,500\np1,x,10,1,500\n")
    with pytest.raises(InputError) as err:
        read_pods(bad)
    assert err.value.file == str(bad) and err.value.line == 3


def test_openb_missing_column(tmp_path: Path) -> None:
    bad = tmp_path / "nodes.csv"
    bad.write_text("sn,cpu_milli,gpu,model\nn0,1000,1,T4\n")
    with pytest.raises(InputError, match="memory_mib"):
        read_nodes(bad)


def test_openb_fractional_multi_gpu_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "pods.csv"
    bad.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,10,2,500\n")
    with pytest.raises(InputError, match="whole GPUs"):
        read_pods(bad)


def test_cluster_spec_labels_blocks_and_racks(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(
        "nodes:\n- preset: dgx-h100\n  count: 8\n  blocks: 2\n  racks_per_block: 2\n"
        "- name: cpu\n  cpu: 64\n  memory: 256Gi\n  count: 2\n"
    )
    cluster = load_cluster_spec(spec)
    assert len(cluster.nodes) == 10
    h100 = cluster.nodes[0]
    assert h100.gpu_count == 8 and h100.cpu_milli > 0 and h100.memory_bytes > 0
    assert len({n.labels[BLOCK] for n in cluster.nodes[:8]}) == 2
    assert len({n.labels[RACK] for n in cluster.nodes[:8]}) == 4
    assert cluster.profiles[0] is not None and cluster.profiles[-1] is None


def test_cluster_spec_errors(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text("nodes:\n- preset: no-such-node\n")
    with pytest.raises(InputError, match="unknown node preset"):
        load_cluster_spec(spec)
    spec.write_text("nodes: [\n")
    with pytest.raises(InputError) as err:
        load_cluster_spec(spec)
    assert err.value.file == str(spec)


MANIFESTS = """
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations: {kubegpu.io/duration: 2h, kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack}
spec:
  parallelism: 4
  template:
    spec:
      containers:
      - name: main
        image: trainer:1.0
        resources: {limits: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 8}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ptj, annotations: {kubegpu.io/duration: "90m"}}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
    Worker: {replicas: 3, template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 2}}}]}}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
"""


def test_job_manifests(tmp_path: Path) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_text(MANIFESTS)
    jobs = {j.name: j for j in load_job_manifests([path])}
    assert set(jobs) == {"train", "ptj", "js"}
    assert len(jobs["train"].pods) == 4 and jobs["train"].duration == 7200
    assert jobs["train"].topology is not None and jobs["train"].pods[0].gpu_count == 8
    assert jobs["ptj"].duration == 5400 and [p.gpu_count for p in jobs["ptj"].pods] == [1, 2, 2, 2]
    assert len(jobs["js"].pods) == 4 and jobs["js"].min_member == 4


def test_bad_duration(tmp_path: Path) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_text(
        "kind: Job\nmetadata: {name: j, annotations: {kubegpu.io/duration: soon}}\n"
        "spec: {template: {spec: {containers: [{name: c}]}}}\n"
    )
    with pytest.raises(InputError, match="duration"):
        load_job_manifests([path])


def test_synthetic_is_deterministic() -> None:
    a = synthetic_jobs(50, 7)
    b = synthetic_jobs(50, 7)
    assert a == b
    assert synthetic_jobs(50, 8) != a
