"""The FGD paper's experiment: shuffle with a seed, inflate to 130% of GPU capacity, pods never leave.

Follows hkust-adsl/kubernetes-scheduler-simulator (core.go Simulate, TunePodsByNodeTotalResource,
SchedulePods) and experiments/analysis/merge_alloc_discrete: column k = mean allocation while the
arrived GPU request rounds to k% of capacity.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kubegpu.errors import InputError
from kubegpu.scheduler.framework import Framework, Weighted
from kubegpu.scheduler.gpu.fragmentation import FragModel, StateCache, typical_pods
from kubegpu.scheduler.gpu.registry import ARTIFACT_LABELS, make_policy
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, NodeSpec
from kubegpu.sim.traces.files import read_text

PAPER_WEIGHT = 1000  # every artifact run enables one score plugin with weight 1000
DEFAULT_SEEDS = tuple(range(42, 52))


def inflate(pods: Sequence[GpuPod], capacity_milli: int, ratio: float, rng: np.random.Generator) -> list[GpuPod]:
    """Shuffle the trace, then append clones sampled with replacement until the GPU request would
    pass ratio × capacity (the stop test uses the clone's per-GPU milli, as the artifact does)."""
    ordered = sorted(pods, key=lambda p: p.name)
    out = [ordered[i] for i in rng.permutation(len(ordered))]
    total = sum(p.total_gpu_milli for p in pods)
    target = ratio * capacity_milli
    if ratio <= 0 or total >= target:
        return out
    serial = 0
    while True:
        clone = pods[int(rng.integers(len(pods)))]
        if total + clone.gpu_milli > target:
            break
        total += clone.total_gpu_milli
        out.append(
            GpuPod(
                f"{clone.name}-tuned-{serial}",
                clone.cpu_milli,
                clone.memory_bytes,
                clone.gpu_count,
                clone.gpu_milli,
                clone.gpu_models,
            )
        )
        serial += 1
    return out


@dataclass(frozen=True)
class RunResult:
    """One (policy, workload, seed) run: per-arrival curves and the discrete table row."""

    policy: str
    workload: str
    seed: int
    arrival: float
    capacity_milli: int
    arrived_milli: tuple[int, ...]
    allocated_milli: tuple[int, ...]
    frag_milli: tuple[float, ...]
    failed_pods: int
    pods: int
    discrete: dict[int, float] = field(default_factory=dict)

    @property
    def final_alloc_ratio(self) -> float:
        """Allocated GPU milli over capacity, percent, after the last arrival."""
        return 100.0 * self.allocated_milli[-1] / self.capacity_milli if self.allocated_milli else 0.0

    @property
    def alloc_at_arrival(self) -> float:
        """The published metric: allocation at the target arrival column (percent)."""
        column = round(self.arrival * 100)
        return self.discrete.get(column, self.final_alloc_ratio)

    @property
    def unallocated_gpus(self) -> float:
        """GPUs left unallocated after the last arrival."""
        return (self.capacity_milli - (self.allocated_milli[-1] if self.allocated_milli else 0)) / 1000


def discretize(arrived: Sequence[int], allocated: Sequence[int], capacity: int, top: int = 130) -> dict[int, float]:
    """merge_alloc_discrete: column k is the mean allocation % over events whose rounded arrived %
    equals k (±1 when none does), rounded to 2 decimals."""
    arr = np.round(np.asarray(arrived, dtype=np.float64) / capacity * 100, 0)
    alloc = np.round(np.asarray(allocated, dtype=np.float64) / capacity * 100, 2)
    out: dict[int, float] = {}
    for k in range(top + 1):
        sel = alloc[arr == k]
        if sel.size == 0:
            sel = alloc[(arr >= k - 1) & (arr <= k + 1)]
            if sel.size == 0:
                continue
        out[k] = round(float(sel.mean()), 2)
    return out


def run_policy(
    nodes: Sequence[NodeSpec],
    trace: Sequence[GpuPod],
    policy: str,
    seed: int,
    arrival: float = 1.3,
    workload: str = "custom",
    progress: Callable[[int], None] | None = None,
    tie_break: str = "lowest-name",
) -> RunResult:
    """One run of the paper's method for one policy and seed (deterministic for a given seed)."""
    cluster = GpuCluster(nodes)
    typical = typical_pods(trace)
    rng = np.random.default_rng(seed)
    pods = inflate(trace, cluster.total_gpu_milli, arrival, rng)
    # The artifact prefixes node names with a seeded random permutation ("%04d-" + name) before
    # creating them, and its scheduler fork breaks score ties by the smallest name.
    name_rank = rng.permutation(cluster.size).astype(np.int64)
    plugin = make_policy(policy, typical)
    framework = Framework([Weighted(plugin, PAPER_WEIGHT)], seed=seed + 7919, tie_break=tie_break, name_rank=name_rank)
    metric = StateCache(cluster, FragModel(typical, cluster.model_names))
    node_frag = metric.node_frag()
    frag_total = float(node_frag.sum())
    arrived = allocated = failed = 0
    arrived_curve: list[int] = []
    alloc_curve: list[int] = []
    frag_curve: list[float] = []
    for i, pod in enumerate(pods):
        arrived += pod.total_gpu_milli
        node = framework.schedule(cluster, pod)
        if node is None:
            failed += 1
        else:
            gpus = plugin.select_gpus(cluster, node, pod, framework.rng)
            cluster.bind(node, pod, gpus)
            plugin.bound(cluster, node)
            metric.update(cluster, node)
            new = metric.frag_of[int(metric.node_state[node])]
            frag_total += new - node_frag[node]
            node_frag[node] = new
            allocated += pod.total_gpu_milli
        arrived_curve.append(arrived)
        alloc_curve.append(allocated)
        frag_curve.append(frag_total)
        if progress is not None and i % 500 == 0:
            progress(i)
    cap = cluster.total_gpu_milli
    return RunResult(
        policy,
        workload,
        seed,
        arrival,
        cap,
        tuple(arrived_curve),
        tuple(alloc_curve),
        tuple(frag_curve),
        failed,
        len(pods),
        discretize(arrived_curve, alloc_curve, cap, round(arrival * 100)),
    )


@dataclass(frozen=True)
class Published:
    """The authors' per-seed allocation % at a given arrival column, per (workload, policy)."""

    values: dict[tuple[str, str], dict[int, float]]

    def mean(self, workload: str, policy: str) -> float | None:
        """Mean over the published seeds, or None when the pair was not published."""
        seeds = self.values.get((workload, policy))
        return None if not seeds else sum(seeds.values()) / len(seeds)

    def seed(self, workload: str, policy: str, seed: int) -> float | None:
        """One seed's published value."""
        return self.values.get((workload, policy), {}).get(seed)


def read_published(path: Path, column: int = 130) -> Published:
    """Read analysis_allo_discrete.csv: workload, sc_policy, tune, seed, total_gpus, 0..130."""
    labels = {v: k for k, v in ARTIFACT_LABELS.items()}
    values: dict[tuple[str, str], dict[int, float]] = {}
    with io.StringIO(read_text(path), newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or str(column) not in reader.fieldnames:
            raise InputError(f"no column {column} in the header", file=str(path), line=1)
        for row in reader:
            policy = labels.get(row["sc_policy"])
            if policy is None:
                continue
            workload = row["workload"].removeprefix("openb_pod_list_")
            try:
                values.setdefault((workload, policy), {})[int(row["seed"])] = float(row[str(column)])
            except ValueError:
                raise InputError(f"bad number in column {column}", file=str(path), line=reader.line_num) from None
    return Published(values)


@dataclass(frozen=True)
class Summary:
    """Mean over seeds for one (workload, policy): our ratio beside the published one."""

    policy: str
    workload: str
    seeds: tuple[int, ...]
    arrival: float
    gpu_alloc_ratio_mean: float
    gpu_alloc_ratio_std: float
    unallocated_gpus_mean: float
    failed_pods_mean: float
    frag_ratio_mean: float
    published_mean: float | None

    def to_dict(self) -> dict[str, object]:
        """The JSON object printed by `kubegpu simulate -o json`."""
        out: dict[str, object] = {
            "policy": self.policy,
            "workload": self.workload,
            "seeds": list(self.seeds),
            "arrival": self.arrival,
            "gpu_alloc_ratio_mean": round(self.gpu_alloc_ratio_mean, 3),
            "gpu_alloc_ratio_std": round(self.gpu_alloc_ratio_std, 3),
            "unallocated_gpus_mean": round(self.unallocated_gpus_mean, 1),
            "failed_pods_mean": round(self.failed_pods_mean, 1),
            "frag_pct_of_capacity_mean": round(self.frag_ratio_mean, 3),
        }
        if self.published_mean is not None:
            out["published_mean"] = round(self.published_mean, 3)
            out["delta"] = round(self.gpu_alloc_ratio_mean - self.published_mean, 3)
        return out


def summarize(results: Sequence[RunResult], published: Published | None = None) -> list[Summary]:
    """Group runs by (workload, policy) in first-seen order and average over seeds."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.workload, r.policy), []).append(r)
    out: list[Summary] = []
    for (workload, policy), runs in groups.items():
        ratios = np.array([r.alloc_at_arrival for r in runs])
        frag = np.array([100.0 * r.frag_milli[-1] / r.capacity_milli if r.frag_milli else 0.0 for r in runs])
        pub = published.mean(workload, policy) if published is not None else None
        out.append(
            Summary(
                policy,
                workload,
                tuple(r.seed for r in runs),
                runs[0].arrival,
                float(ratios.mean()),
                float(ratios.std()),
                float(np.mean([r.unallocated_gpus for r in runs])),
                float(np.mean([r.failed_pods for r in runs])),
                float(frag.mean()),
                pub,
            )
        )
    return out


@dataclass(frozen=True)
class RunSpec:
    """One run to perform (picklable, for worker processes)."""

    nodes: tuple[NodeSpec, ...]
    trace: tuple[GpuPod, ...]
    policy: str
    seed: int
    arrival: float
    workload: str
    tie_break: str


def _run_spec(spec: RunSpec) -> RunResult:
    return run_policy(
        spec.nodes, spec.trace, spec.policy, spec.seed, spec.arrival, spec.workload, tie_break=spec.tie_break
    )


def run_matrix(
    nodes: Sequence[NodeSpec],
    traces: Mapping[str, Sequence[GpuPod]],
    policies: Sequence[str],
    seeds: Sequence[int],
    arrival: float = 1.3,
    workers: int = 1,
    tie_break: str = "lowest-name",
    on_done: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Every (workload, policy, seed) run, optionally over worker processes; results keep input order."""
    specs = [
        RunSpec(tuple(nodes), tuple(trace), p, s, arrival, w, tie_break)
        for w, trace in traces.items()
        for p in policies
        for s in seeds
    ]
    results: list[RunResult] = []
    if workers <= 1 or len(specs) <= 1:
        for spec in specs:
            results.append(_run_spec(spec))
            if on_done is not None:
                on_done(results[-1])
        return results
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with context.Pool(processes=workers) as pool:
        for result in pool.imap(_run_spec, specs):
            results.append(result)
            if on_done is not None:
                on_done(result)
    return results
