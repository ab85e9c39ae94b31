"""What a workload's accelerator pods run on and talk through: the device word, the collective library and what
uses /dev/shm, decided from the accelerator resources its pods request and its kind, for every message that names them.

NVIDIA GPUs all-reduce with NCCL, AMD GPUs with RCCL, Intel GPUs with oneCCL, Gaudi with HCCL and Neuron devices
with the Neuron collectives; TPU pods run XLA collectives over the slice's inter-chip links (ICI), and across
slices over the data-center network. An MPIJob's ranks exchange through MPI; Ray keeps its object store in
/dev/shm (Ray falls back to the much slower /tmp when /dev/shm is small, ray python/ray/_private/services.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubegpu.manifests.document import Document, as_mapping, get_path
from kubegpu.manifests.template import PodTemplate
from kubegpu.workloads import trainjob

# By the accelerator resource's prefix: the device word and the collective library.
_DEVICES: tuple[tuple[str, str, str], ...] = (
    ("google.com/tpu", "TPU", "XLA (ICI within a slice)"),
    ("amd.com/", "GPU", "RCCL"),
    ("gpu.intel.com/", "GPU", "oneCCL"),
    ("habana.ai/", "Gaudi", "HCCL"),
    ("aws.amazon.com/neuron", "Neuron", "Neuron collective"),
)
_RAY_GROUP = "ray.io/"  # KubeRay's kinds (RayCluster, RayJob, RayService): their adapter is workloads/ray.py


@dataclass(frozen=True)
class Stack:
    """The words a message uses for a workload's accelerator pods."""

    device: str  # "GPU", "TPU", "Gaudi", "Neuron"
    collective: str  # "NCCL", "RCCL", "XLA (ICI within a slice)", "MPI and NCCL"
    shm_consequence: str  # what goes wrong with the 64 MiB /dev/shm default
    shm_needed: bool = True  # False: only some programs of such pods need it (TPU pods: XLA does not use it)

    @property
    def tpu(self) -> bool:
        return self.device == "TPU"


def stack_of(doc: Document, templates: Iterable[PodTemplate]) -> Stack:
    """The stack of `doc`'s accelerator pods (`templates`: those that request accelerators)."""
    names = {str(name) for t in templates for c in t.containers for name in _resource_names(c.data)}
    device, collective = "GPU", "NCCL"
    for prefix, word, library in _DEVICES:
        if any(name.startswith(prefix) for name in names):
            device, collective = word, library
            break
    library = collective
    mpi = doc.kind == "MPIJob" or _mpi_runtime(doc)
    if mpi:
        collective = f"MPI and {collective}" if device != "TPU" else "MPI"
    if doc.api_version.startswith(_RAY_GROUP):
        shm = "Ray's object store, which lives in /dev/shm, falls back to the much slower /tmp" + (
            "" if device == "TPU" else f" (and {collective} fails with 'Bus error' or 'No space left on device')"
        )
    elif mpi:
        shm = f"the shared-memory transports of MPI and {library} fail with 'Bus error' or 'No space left on device'"
    elif device == "TPU":
        shm = (
            "TPU collectives do not use it, but multi-process data loaders (PyTorch/XLA DataLoader workers, Grain, "
            "tf.data) fail there with 'Bus error' or 'No space left on device'"
        )
        return Stack(device, collective, shm, shm_needed=False)
    elif _tensorflow(templates):  # NVIDIA's TensorFlow containers warn that 64 MiB may be insufficient for it
        shm = (
            f"TensorFlow's {collective} and multi-process input pipelines fail with 'Bus error' or 'No space left "
            "on device'"
        )
    else:
        shm = f"PyTorch DataLoader workers and {collective} fail with 'Bus error' or 'No space left on device'"
    return Stack(device, collective, shm)


def _mpi_runtime(doc: Document) -> bool:
    """A TrainJob bound to a runtime whose ML policy launches its nodes with MPI or Flux (an MPI-style launcher)."""
    runtime = (
        trainjob.bound_runtime(doc) if doc.kind == "TrainJob" else doc if doc.kind.endswith("TrainingRuntime") else None
    )
    policy = as_mapping(get_path(runtime.data, ("spec", "mlPolicy"))) if runtime is not None else {}
    return "mpi" in policy or "flux" in policy


def _tensorflow(templates: Iterable[PodTemplate]) -> bool:
    """Every accelerator container runs TensorFlow: a TensorFlow image (tensorflow/tensorflow, TF Serving), or a KServe
    `tensorflow:` predictor, whose image KServe's TensorFlow Serving runtime gives."""
    images = [
        "tensorflow" if c.path[-1:] == ("tensorflow",) else str(c.data.get("image") or "").lower()
        for t in templates
        for c in t.containers
        if c.kind == "container"
    ]
    return bool(images) and all("tensorflow" in image and "torch" not in image for image in images)


def _resource_names(container: object) -> Iterable[object]:
    resources = as_mapping(as_mapping(container).get("resources"))
    for section in ("limits", "requests"):
        yield from as_mapping(resources.get(section))
