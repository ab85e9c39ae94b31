"""Generate a deterministic corpus of GPU workloads (mixed kinds, CRDs included) for the benchmarks.

`write_corpus(folder, files=200, per_file=10, seed=7)` writes files × per_file workloads.
"""

from __future__ import annotations

import random
from pathlib import Path

IMAGES = [
    "nvcr.io/nvidia/pytorch:24.05-py3",
    "vllm/vllm-openai:latest",
    "nvcr.io/nvidia/tritonserver:24.05-py3",
    "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel",
    "ghcr.io/huggingface/text-generation-inference:2.0",
    "nvidia/cuda:12.4.1-runtime-ubuntu22.04",
    "myreg:5000/team/train",
]


def _container(rng: random.Random, name: str, gpus: int, indent: str) -> str:
    cpu = rng.choice(["8", "16", "7500m", "12", "4"])
    mem = rng.choice(["64Gi", "128Gi", "256Gi"])
    guaranteed = rng.random() < 0.5
    limits = f'cpu: "{cpu}", memory: {mem}, nvidia.com/gpu: {gpus}' if guaranteed else f"nvidia.com/gpu: {gpus}"
    policy = rng.choice(["Always", "IfNotPresent", None])
    lines = [
        f"{indent}- name: {name}",
        f"{indent}  image: {rng.choice(IMAGES)}",
        *([f"{indent}  imagePullPolicy: {policy}"] if policy else []),
        f'{indent}  args: ["--model", "meta-llama/Llama-3-8B", "--port", "8000"]',
        f"{indent}  env:",
        f"{indent}  - {{name: NCCL_DEBUG, value: INFO}}",
        f"{indent}  resources:",
        f'{indent}    requests: {{cpu: "{cpu}", memory: {mem}, nvidia.com/gpu: {gpus}}}',
        f"{indent}    limits: {{{limits}}}",
    ]
    if rng.random() < 0.4:
        lines += [f"{indent}  volumeMounts:", f"{indent}  - {{name: dshm, mountPath: /dev/shm}}"]
    return "\n".join(lines)


def _pod_spec(rng: random.Random, indent: str, gpus: int) -> str:
    return "\n".join(
        [
            f"{indent}containers:",
            _container(rng, "main", gpus, indent),
            f"{indent}volumes:",
            f"{indent}- name: dshm",
            f"{indent}  emptyDir: {{medium: Memory, sizeLimit: 16Gi}}",
        ]
    )


def workload(rng: random.Random, index: int) -> str:
    kind = rng.choice(
        [
            "Deployment",
            "StatefulSet",
            "Job",
            "PyTorchJob",
            "JobSet",
            "RayCluster",
            "LeaderWorkerSet",
            "InferenceService",
            "VolcanoJob",
            "MPIJob",
        ]
    )
    gpus = rng.choice([1, 2, 4, 8])
    name = f"w{index}"
    head = f"metadata:\n  name: {name}\n  namespace: team-{index % 7}\n  labels: {{app: {name}}}\n"
    if kind in ("Deployment", "StatefulSet"):
        return (
            f"apiVersion: apps/v1\nkind: {kind}\n{head}spec:\n  replicas: {rng.randint(1, 4)}\n"
            f"  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n"
            f"    metadata: {{labels: {{app: {name}}}}}\n"
            f"    spec:\n{_pod_spec(rng, '      ', gpus)}\n"
        )
    if kind == "Job":
        return (
            f"apiVersion: batch/v1\nkind: Job\n{head}spec:\n  parallelism: {rng.randint(1, 4)}\n  template:\n"
            f"    spec:\n      restartPolicy: Never\n{_pod_spec(rng, '      ', gpus)}\n"
        )
    if kind == "PyTorchJob":
        return (
            f"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n{head}spec:\n  pytorchReplicaSpecs:\n"
            f"    Master:\n      replicas: 1\n      template:\n        spec:\n"
            f"{_pod_spec(rng, '          ', gpus)}\n"
            f"    Worker:\n      replicas: {rng.randint(1, 8)}\n      template:\n        spec:\n"
            f"{_pod_spec(rng, '          ', gpus)}\n"
        )
    if kind == "MPIJob":
        return (
            f"apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\n{head}spec:\n  mpiReplicaSpecs:\n"
            f"    Worker:\n      replicas: {rng.randint(2, 8)}\n      template:\n        spec:\n"
            f"{_pod_spec(rng, '          ', gpus)}\n"
        )
    if kind == "JobSet":
        return (
            f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n{head}spec:\n  replicatedJobs:\n"
            f"  - name: workers\n    replicas: {rng.randint(1, 4)}\n    template:\n      spec:\n"
            f"        parallelism: 2\n        template:\n          spec:\n{_pod_spec(rng, '            ', gpus)}\n"
        )
    if kind == "RayCluster":
        return (
            f"apiVersion: ray.io/v1\nkind: RayCluster\n{head}spec:\n  headGroupSpec:\n    template:\n"
            f"      spec:\n{_pod_spec(rng, '        ', 0)}\n  workerGroupSpecs:\n  - groupName: gpu\n"
            f"    replicas: {rng.randint(1, 6)}\n    template:\n      spec:\n{_pod_spec(rng, '        ', gpus)}\n"
        )
    if kind == "LeaderWorkerSet":
        return (
            f"apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n{head}spec:\n  replicas: 2\n"
            f"  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      spec:\n"
            f"{_pod_spec(rng, '        ', gpus)}\n"
        )
    if kind == "InferenceService":
        return (
            f"apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n{head}spec:\n  predictor:\n"
            f"    minReplicas: {rng.choice([0, 1, 2])}\n{_pod_spec(rng, '    ', gpus)}\n"
        )
    return (
        f"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n{head}spec:\n  schedulerName: volcano\n"
        f"  minAvailable: 2\n  tasks:\n  - name: worker\n    replicas: {rng.randint(2, 4)}\n    template:\n"
        f"      spec:\n{_pod_spec(rng, '        ', gpus)}\n"
    )


def write_corpus(folder: Path, files: int = 200, per_file: int = 10, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for f in range(files):
        docs = [workload(rng, f * per_file + i) for i in range(per_file)]
        path = folder / f"workloads-{f:03d}.yaml"
        path.write_text("# generated GPU workloads for kubegpu benchmarks\n---\n" + "---\n".join(docs))
        written.append(path)
    return written
