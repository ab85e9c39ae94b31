"""Readers for the Alibaba openb trace (cluster-trace-gpu-v2023): node lists and every pod-list variant.

Follows the column semantics of alibaba/clusterdata cluster-trace-gpu-v2023 and the FGD simulator's
pod_csv_to_yaml.py: cpu/memory become requests, gpu_milli is per GPU, gpu_spec lists allowed models.
The trace ships with kubegpu (compressed, with sha256 digests; see data/openb/README.md).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.scheduler.gpu.state import GpuPod, NodeSpec
from kubegpu.sim.traces.files import csv_files, locate, plain_name, read_text

MIB = 1024 * 1024
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
OPENB_MAX_PODS = 1001  # the FGD simulator's node allocatable pods
NODE_LIST = "openb_node_list_gpu_node.csv"  # the FGD paper's cluster: 1213 GPU nodes
PUBLISHED = "analysis_allo_discrete.csv"  # the authors' published GPU allocation ratios
PUBLISHED_SUBDIR = "fgd_expected_results"  # where the simulator repository keeps them
BUNDLED_DIR = Path(__file__).resolve().parent.parent / "data" / "openb"
ENV_VAR = "KUBEGPU_OPENB_DIR"


def default_openb_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """`$KUBEGPU_OPENB_DIR` when set, else the copy of the trace that ships with kubegpu."""
    override = environ.get(ENV_VAR)
    return Path(override) if override else BUNDLED_DIR


def node_list(folder: Path) -> Path:
    """The FGD node list in an openb folder (plain or compressed)."""
    return locate(folder, NODE_LIST)


def published_file(folder: Path) -> Path | None:
    """The published results beside the trace or in its fgd_expected_results/ folder; None when absent."""
    for place in (folder, folder / PUBLISHED_SUBDIR):
        path = locate(place, PUBLISHED)
        if path.is_file():
            return path
    return None


def _int(path: Path, line: int, column: str, text: str | None, minimum: int = 0) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise InputError(f"column {column!r}: {text!r} is not an integer", file=str(path), line=line) from None
    if value < minimum:
        raise InputError(f"column {column!r}: {value} is below {minimum}", file=str(path), line=line)
    return value


def _rows(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    with io.StringIO(read_text(path), newline="") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)} in the header", file=str(path), line=1)
        return [(reader.line_num, row) for row in reader]


def read_nodes(path: Path) -> list[NodeSpec]:
    """An openb node list: one NodeSpec per row (GPU nodes get gpu*1000 milli, model as label)."""
    nodes: list[NodeSpec] = []
    for line, row in _rows(path, NODE_COLUMNS):
        gpus = _int(path, line, "gpu", row["gpu"])
        model = (row.get("model") or "").strip()
        if gpus > 0 and not model:
            raise InputError("a node with GPUs needs a model", file=str(path), line=line)
        nodes.append(
            NodeSpec(
                name=row["sn"].strip(),
                cpu_milli=_int(path, line, "cpu_milli", row["cpu_milli"]),
                memory_bytes=_int(path, line, "memory_mib", row["memory_mib"]) * MIB,
                gpu_count=gpus,
                gpu_model=model if gpus > 0 else "",
                max_pods=OPENB_MAX_PODS,
                labels={"alibabacloud.com/gpu-card-model": model} if model else {},
            )
        )
    if not nodes:
        raise InputError("the node list is empty", file=str(path))
    return nodes


def read_pods(path: Path) -> list[GpuPod]:
    """An openb pod list (11-column or 5-column multigpu variant); timestamps are kept as arrival."""
    pods: list[GpuPod] = []
    for line, row in _rows(path, POD_COLUMNS):
        count = _int(path, line, "num_gpu", row["num_gpu"])
        milli = _int(path, line, "gpu_milli", row["gpu_milli"])
        if count > 0 and not 0 < milli <= 1000:
            raise InputError(f"gpu_milli {milli} must be in 1..1000 for a GPU pod", file=str(path), line=line)
        if count > 1 and milli != 1000:
            raise InputError("a multi-GPU pod must request whole GPUs (gpu_milli 1000)", file=str(path), line=line)
        spec = (row.get("gpu_spec") or "").strip()
        created = (row.get("creation_time") or "").strip()
        deleted = (row.get("deletion_time") or "").strip()
        arrival = float(_int(path, line, "creation_time", created)) if created else 0.0
        duration = (float(_int(path, line, "deletion_time", deleted)) - arrival) if deleted and created else None
        cpu = _int(path, line, "cpu_milli", row["cpu_milli"])
        pods.append(
            GpuPod(
                name=row["name"].strip(),
                cpu_milli=cpu if cpu > 0 else 100,  # GetNonzeroRequests: an empty CPU request counts 100m
                memory_bytes=_int(path, line, "memory_mib", row["memory_mib"]) * MIB,
                gpu_count=count if milli > 0 else 0,
                gpu_milli=milli if count > 0 else 0,
                gpu_models=tuple(m for m in spec.split("|") if m),
                arrival=arrival,
                duration=duration if duration is None or duration >= 0 else None,
            )
        )
    if not pods:
        raise InputError("the pod list is empty", file=str(path))
    return pods


def workload_name(path: Path) -> str:
    """`openb_pod_list_gpushare40.csv` (or `.csv.xz`) -> `gpushare40`."""
    return plain_name(path).removesuffix(".csv").removeprefix("openb_pod_list_")


def variant_files(folder: Path) -> dict[str, Path]:
    """Every pod-list variant in an openb folder, by workload name."""
    return {workload_name(p): p for p in csv_files(folder, "openb_pod_list_")}
