"""Two pods on which the commands used to disagree: lint, admit, simulate, audit and the webhook now agree.

- A GPU pod with `spec.resources: {}`: with PodLevelResources (on since 1.34) the empty pod-level block alone
  decides the QoS class, BestEffort; lint reported it, admit called it Guaranteed and pinned 8 CPUs.
- A Job whose 8-CPU init container runs before its 8-CPU app container needs 8 CPUs, not 16; the simulator
  summed both and left it pending on a 12-CPU node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.webhook.review import WebhookConfig, review

runner = CliRunner()

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resources: {}
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:25.01-py3
    resources:
      requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
      limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 1}
"""

INIT_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: prep-train
  annotations: {kubegpu.io/duration: 1h}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
      - name: prepare
        image: busybox:1.36
        resources:
          requests: {cpu: "8", memory: 16Gi}
          limits: {cpu: "8", memory: 16Gi}
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:25.01-py3
        resources:
          requests: {cpu: "8", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {cpu: "8", memory: 16Gi, nvidia.com/gpu: 1}
"""

STATIC_KUBELET = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0-1"
topologyManagerPolicy: single-numa-node
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, text in (
        ("pod.yaml", GPU_POD),
        ("job.yaml", INIT_JOB),
        ("kubelet.yaml", STATIC_KUBELET),
        ("cluster.yaml", "nodes:\n  - {name: gpu12, cpu: 12, memory: 128Gi, gpus: 1, model: H100}\n"),
    ):
        (tmp_path / name).write_text(text, encoding="utf-8")
        out[name] = tmp_path / name
    return out


def test_empty_pod_level_resources_lint_and_admit_agree(files: dict[str, Path]) -> None:
    lint = runner.invoke(app, ["lint", str(files["pod.yaml"]), "--select", "KG101", "-o", "json"])
    findings = json.loads(lint.stdout)["findings"]
    assert [(f["rule"], f["path"]) for f in findings] == [("KG101", "spec.resources")]
    assert "BestEffort" in findings[0]["message"]
    admit = runner.invoke(
        app,
        [
            "admit",
            str(files["pod.yaml"]),
            "--node",
            "dgx-h100",
            "--kubelet-config",
            str(files["kubelet.yaml"]),
            "-o",
            "json",
        ],
    )
    row = json.loads(admit.stdout)[0]
    assert row["admitted"] and row["qos"] == "BestEffort"
    assert [c["exclusive_cpus"] for c in row["containers"]] == [[]]  # a BestEffort pod gets no pinned CPUs


def test_empty_pod_level_resources_webhook_agrees() -> None:
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "namespace": "ml",
            "object": yaml.safe_load(GPU_POD),
        },
    }
    warnings = review(json.dumps(body), "validate", WebhookConfig()).response["response"].get("warnings", [])
    assert any("KG101" in w and "BestEffort" in w for w in warnings)


def test_init_container_is_a_maximum_in_the_simulator(files: dict[str, Path]) -> None:
    result = runner.invoke(
        app,
        [
            "simulate",
            "--nodes",
            str(files["cluster.yaml"]),
            "--pods",
            str(files["job.yaml"]),
            "--mode",
            "events",
            "--policy",
            "most-allocated",
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert '"completed_pods": 1' in text and '"pending_pods": 0' in text


# An Argo workflow whose resource step creates a PyTorchJob (a Burstable master, Guaranteed workers), and a TrainJob
# whose pods are its ClusterTrainingRuntime's trainer job with the TrainJob's GPUs merged in: the runtime's CPU and
# memory requests equal their limits, so the merged pod is Guaranteed; spec.trainer alone (no runtime) is not.
ARGO_PYTORCHJOB = """\
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: train-}
spec:
  entrypoint: train
  templates:
  - name: train
    resource:
      action: create
      manifest: |
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: bert}
        spec:
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              template:
                spec:
                  containers:
                  - name: pytorch
                    image: nvcr.io/nvidia/pytorch:25.01-py3
                    resources:
                      requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 4}
                      limits: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 4}
            Worker:
              replicas: 3
              template:
                spec:
                  containers:
                  - name: pytorch
                    image: nvcr.io/nvidia/pytorch:25.01-py3
                    resources:
                      requests: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 4}
                      limits: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 4}
"""

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                  resources:
                    requests: {cpu: "32", memory: 256Gi}
                    limits: {cpu: "32", memory: 256Gi}
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llama}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits: {nvidia.com/gpu: 4}
"""


def _lint_json(*paths: Path) -> Any:
    result = runner.invoke(app, ["lint", *map(str, paths), "--select", "KG101", "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _admit_rows(kubelet: Path, *paths: Path) -> list[dict[str, Any]]:
    args = [*map(str, paths), "--node", "dgx-h100", "--kubelet-config", str(kubelet), "-o", "json"]
    result = runner.invoke(app, ["admit", *args])
    assert result.exit_code in (0, 1), result.output
    out: list[dict[str, Any]] = json.loads(result.stdout)
    return out


def test_argo_embedded_and_trainjob_runtime_pods_lint_and_admit_agree(files: dict[str, Path], tmp_path: Path) -> None:
    argo = tmp_path / "argo.yaml"
    argo.write_text(ARGO_PYTORCHJOB, encoding="utf-8")
    train = tmp_path / "train.yaml"
    train.write_text(f"{RUNTIME}---\n{TRAINJOB}", encoding="utf-8")
    lint = _lint_json(argo, train)
    rows = _admit_rows(files["kubelet.yaml"], argo, train)
    # the same pods: the embedded PyTorchJob's two roles and the TrainJob's merged pod. Lint also checks the
    # runtime's own template (the object a person edits); admit admits the pods the cluster makes, and a runtime
    # the TrainJob uses makes none of its own.
    assert lint["summary"]["pod_templates"] == 4 and len(rows) == 3
    by_pod = {r["pod"]: r for r in rows}
    assert sorted(by_pod) == ["bert-Master", "bert-Worker", "llama-trainer"]
    # the same QoS: lint's only KG101 is the embedded master, which admit calls Burstable; the rest are Guaranteed
    findings = lint["findings"]
    where = [(f["rule"], f["line"]) for f in findings]
    assert where == [("KG101", 23)]  # the embedded master's resources
    assert "cpu request 8 != limit 16" in findings[0]["message"]
    assert by_pod["bert-Master"]["qos"] == "Burstable"
    assert {by_pod[p]["qos"] for p in ("bert-Worker", "llama-trainer")} == {"Guaranteed"}
    # the same requests: the merged trainer pod has the runtime's 32 CPUs pinned and the TrainJob's 4 GPUs
    trainer = by_pod["llama-trainer"]["containers"][0]
    assert trainer["name"] == "node" and len(trainer["exclusive_cpus"]) == 32
    assert sum(len(ids) for ids in trainer["devices"].values()) == 4


def test_trainjob_without_its_runtime_lint_and_admit_agree(files: dict[str, Path], tmp_path: Path) -> None:
    train = tmp_path / "train.yaml"
    train.write_text(TRAINJOB, encoding="utf-8")
    lint = _lint_json(train)
    rows = _admit_rows(files["kubelet.yaml"], train)
    assert [r["pod"] for r in rows] == ["llama-trainer"] and lint["summary"]["pod_templates"] == 1
    # spec.trainer alone has a GPU limit and no CPU or memory: BestEffort, for lint and for admit alike
    assert rows[0]["qos"] == "BestEffort"
    findings = lint["findings"]
    assert [f["rule"] for f in findings] == ["KG101"]
    message = findings[0]["message"]
    assert "the pod is not Guaranteed" in message and "only spec.trainer was read" in message


def test_trainjob_runtime_in_another_file_binds_for_admit(files: dict[str, Path], tmp_path: Path) -> None:
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(RUNTIME, encoding="utf-8")
    train = tmp_path / "train.yaml"
    train.write_text(TRAINJOB, encoding="utf-8")
    rows = {r["pod"]: r for r in _admit_rows(files["kubelet.yaml"], train, runtime)}
    assert rows["llama-trainer"]["qos"] == "Guaranteed"
    assert _lint_json(train, runtime)["findings"] == []


def test_admit_places_each_merged_pod_on_a_fresh_node_with_a_remedy(files: dict[str, Path], tmp_path: Path) -> None:
    train = tmp_path / "train.yaml"
    train.write_text(f"{RUNTIME}---\n{TRAINJOB.replace('gpu: 4', 'gpu: 8')}", encoding="utf-8")
    result = runner.invoke(
        app, ["admit", str(train), "--node", "dgx-h100", "--kubelet-config", str(files["kubelet.yaml"])]
    )
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    # the runtime makes no pods of its own: it is named once, as the TrainJob's
    assert not any(line.startswith("pod torch-distributed-node") for line in lines)
    notice = "ClusterTrainingRuntime/torch-distributed: a runtime, admitted as the pods of TrainJob/llama that uses it"
    assert notice in result.stderr
    # the merged pod (the runtime's 32 CPUs with the TrainJob's 8 GPUs) is rejected, and the remedy is the model's
    at = lines.index(next(line for line in lines if line.startswith("pod llama-trainer:")))
    assert "REJECTED TopologyAffinityError" in lines[at] and "(Guaranteed)" in lines[at]
    assert lines[at + 1].strip().startswith("remedy: no setting admits it here: 8 GPUs span 2 NUMA nodes")


def test_simulate_and_gen_read_the_same_pods(tmp_path: Path) -> None:
    from kubegpu.generate.workload import load_workloads
    from kubegpu.sim.workload import load_job_manifests

    argo = tmp_path / "argo.yaml"
    argo.write_text(ARGO_PYTORCHJOB, encoding="utf-8")
    train = tmp_path / "train.yaml"
    train.write_text(f"{RUNTIME}---\n{TRAINJOB}", encoding="utf-8")
    # the simulator runs the PyTorchJob the Argo step creates: a master and 3 workers of 4 GPUs each
    (job,) = load_job_manifests([argo])
    assert job.name == "bert" and [p.gpu_count for p in job.pods] == [4, 4, 4, 4]
    # and the TrainJob as its 2 merged trainer pods: the runtime's 32 CPUs with the TrainJob's 4 GPUs each
    names_and_jobs = load_job_manifests([argo, train])
    assert [j.name for j in names_and_jobs] == ["bert", "llama"]
    llama = names_and_jobs[1]
    assert llama.name == "llama" and llama.min_member == 2
    assert [(p.gpu_count, p.cpu_milli) for p in llama.pods] == [(4, 32000), (4, 32000)]
    # without its runtime the simulator cannot know the TrainJob's pods and skips it, as before
    alone = tmp_path / "alone.yaml"
    alone.write_text(TRAINJOB, encoding="utf-8")
    assert [j.name for j in load_job_manifests([argo, alone])] == ["bert"]
    # gen reads the embedded PyTorchJob, and the TrainJob's pod as the runtime's trainer with the TrainJob's GPUs
    workloads = {w.name: w for w in load_workloads([str(argo), str(train)])}
    assert sorted(workloads) == ["bert", "llama", "torch-distributed"]
    (ref,) = workloads["llama"].templates
    assert ref.pods == 2
    (container,) = workloads["llama"].pod_spec(ref)["containers"]
    assert container["resources"]["limits"] == {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": 4}


def _review(obj: dict[str, Any], kind: str, group: str = "") -> Any:
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": group, "version": "v1", "kind": kind},
            "operation": "CREATE",
            "namespace": "ml",
            "object": obj,
        },
    }
    return review(json.dumps(body), "validate", WebhookConfig())


def test_webhook_judges_the_trainjob_pod_the_trainer_makes_as_lint_does(tmp_path: Path) -> None:
    from kubegpu.manifests import load_text, pod_spec
    from kubegpu.workloads import pod_templates
    from kubegpu.workloads.expand import expand_input

    # one object per review: a TrainJob arrives without its runtime, so the webhook leaves it to its pods
    decision = _review(yaml.safe_load(TRAINJOB), "TrainJob", "trainer.kubeflow.org")
    assert decision.skipped == "not a pod"
    # the pod the trainer makes is the merged one lint reads when the runtime is given: both find no KG101
    objects = expand_input(load_text("train.yaml", f"{RUNTIME}---\n{TRAINJOB}").documents)
    (trainer,) = [t for doc in objects if doc.kind == "TrainJob" for t in pod_templates(doc)]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "llama-node-0-0"}, "spec": dict(pod_spec(trainer))}
    warnings = _review(pod, "Pod").response["response"].get("warnings", [])
    assert not any("KG101" in w for w in warnings)
    train = tmp_path / "train.yaml"
    train.write_text(f"{RUNTIME}---\n{TRAINJOB}", encoding="utf-8")
    assert _lint_json(train)["findings"] == []
    # and spec.trainer alone, sent as a pod, is not Guaranteed for the webhook either
    alone = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    alone["spec"] = {"containers": [{"name": "node", "image": "x:1", "resources": {"limits": {"nvidia.com/gpu": 4}}}]}
    warnings = _review(alone, "Pod").response["response"].get("warnings", [])
    assert any("KG101" in w for w in warnings)


def test_python_api_admit_reads_the_same_pods() -> None:
    from kubegpu import api

    results = api.admit(f"{ARGO_PYTORCHJOB}---\n{RUNTIME}---\n{TRAINJOB}", "dgx-h100")
    assert [(r.pod, r.qos) for r in results] == [
        ("bert-Master", "Burstable"),
        ("bert-Worker", "Guaranteed"),
        ("llama-trainer", "Guaranteed"),
    ]  # as the admit command: the runtime the TrainJob uses makes no pods of its own
    objects = [yaml.safe_load(RUNTIME), yaml.safe_load(TRAINJOB)]  # mappings bind the same way as text
    assert [(r.pod, r.qos) for r in api.admit(objects, "dgx-h100")] == [("llama-trainer", "Guaranteed")]
    # given alone, a runtime is admitted as the pod it would give
    assert [r.pod for r in api.admit(RUNTIME, "dgx-h100")] == ["torch-distributed-node"]


NO_API_VERSION = """\
apiVersion: batch/v1
kind: Job
metadata: {name: ok}
spec: {template: {spec: {containers: [{name: c, image: "t:1", resources: {limits: {nvidia.com/gpu: 1}}}]}}}
---
kind: Job
metadata: {name: bad}
spec: {template: {spec: {containers: [{name: c, image: "u:1", resources: {limits: {nvidia.com/gpu: 1}}}]}}}
"""


def test_every_reader_refuses_an_object_without_apiversion(tmp_path: Path) -> None:
    """gen, coldstart and the Python API refuse what admit and simulate refuse (they skipped it silently)."""
    from kubegpu import api
    from kubegpu.errors import InputError

    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(NO_API_VERSION)
    for args in (
        ["gen", "prepull", "--from", str(jobs)],
        ["coldstart", str(jobs)],
        ["admit", str(jobs), "--node", "dgx-h100"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert f"{jobs}:6:" in result.output, (args, result.output)
        assert "has no apiVersion, which the API server requires" in result.output, (args, result.output)
    with pytest.raises(InputError, match="has no apiVersion, which the API server requires") as raised:
        api.admit(NO_API_VERSION, "dgx-h100")
    assert raised.value.line == 6
    lint = runner.invoke(app, ["lint", str(jobs), "-o", "json", "--exit-zero"])
    assert [f["rule"] for f in json.loads(lint.output)["findings"] if f["line"] == 6] == ["KG002"]  # lint: a finding
