"""The words messages use for what a workload's accelerator pods run on (workloads.stack): the device, the
collective library and what uses /dev/shm, from the accelerator resources, the kind and the images."""

from __future__ import annotations

import pytest

from kubegpu.manifests import load_text
from kubegpu.workloads import pod_templates
from kubegpu.workloads.stack import stack_of


def _stack(kind: str, resource: str, image: str = "example/app:1", api: str = "batch/v1") -> tuple[str, str, bool]:
    spec = (
        f"    spec:\n      containers:\n      - name: c\n        image: {image}\n"
        f"        resources: {{limits: {{{resource}: '1'}}}}\n"
    )
    text = f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: x}}\nspec:\n  template:\n{spec}"
    doc = load_text("x.yaml", text).documents[0]
    stack = stack_of(doc, tuple(pod_templates(doc)))
    return stack.device, stack.collective, stack.shm_needed


@pytest.mark.parametrize(
    ("resource", "image", "expected"),
    [
        ("nvidia.com/gpu", "nvcr.io/nvidia/pytorch:24.05-py3", ("GPU", "NCCL", True)),
        ("amd.com/gpu", "rocm/pytorch:latest", ("GPU", "RCCL", True)),
        ("habana.ai/gaudi", "vault.habana.ai/gaudi-docker/pytorch:1", ("Gaudi", "HCCL", True)),
        ("google.com/tpu", "us-docker.pkg.dev/example/jax:1", ("TPU", "XLA (ICI within a slice)", False)),
        ("nvidia.com/gpu", "tensorflow/tensorflow:2.16.1-gpu", ("GPU", "NCCL", True)),
    ],
)
def test_the_device_and_collective_follow_the_resource_and_image(
    resource: str, image: str, expected: tuple[str, str, bool]
) -> None:
    assert _stack("Job", resource, image) == expected


def test_an_mpijob_talks_through_mpi() -> None:
    text = (
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: m}\nspec:\n  mpiReplicaSpecs:\n"
        "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
        "          - {name: w, image: 'example/nccl-tests:1', resources: {limits: {nvidia.com/gpu: '8'}}}\n"
    )
    doc = load_text("m.yaml", text).documents[0]
    stack = stack_of(doc, tuple(pod_templates(doc)))
    assert stack.collective == "MPI and NCCL" and "MPI" in stack.shm_consequence and stack.shm_needed
