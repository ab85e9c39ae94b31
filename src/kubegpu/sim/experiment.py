"""The FGD paper's experiment as the authors' simulator runs it, draw for draw from Go's math/rand.

Follows hkust-adsl/kubernetes-scheduler-simulator at its published commit: core.go Simulate (rand.Seed with the
tuning seed, then one rand.Int), simulator.go SortClusterPods (sort by name, rand.Shuffle),
TunePodsByNodeTotalResource (tuneUpPods / tuneDownPods), syncClusterResourceList (rand.Perm name prefixes) and
SchedulePods, one pod at a time through the scheduler fork (mental2008/kubernetes v1.20.5-minor), whose
every draw comes from the same global source. So a seed here is the run the authors published for that seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubegpu.errors import InputError
from kubegpu.scheduler.framework import Framework, Weighted
from kubegpu.scheduler.gpu.fragmentation import FloatArray, FragModel, StateCache, typical_pods
from kubegpu.scheduler.gpu.policies import FGDScore
from kubegpu.scheduler.gpu.registry import make_policy
from kubegpu.scheduler.gpu.state import GpuCluster, GpuPod, IntArray, NodeSpec
from kubegpu.sim.discrete import discretize
from kubegpu.sim.gorand import GoRand
from kubegpu.sim.published import PublishedRuns, RowComparison, compare_row

PAPER_WEIGHT = 1000  # every artifact run enables one score plugin with weight 1000
DEFAULT_SEEDS = tuple(range(42, 52))
# simulator.go runScheduler starts the scheduler's informers between the tuning and the node names: the
# reflector of each (Pods, Nodes, CSINodes, PersistentVolumes, PersistentVolumeClaims, Services,
# ReplicationControllers, ReplicaSets, StatefulSets, PodDisruptionBudgets; StorageClasses started earlier,
# before the seed) draws rand.Float64 for its watch timeout (client-go tools/cache/reflector.go ListAndWatch)
INFORMER_WATCH_DRAWS = 10
PLUGIN_METRICS_DRAW = 100  # scheduler.go scheduleOne: rand.Intn(100) < pluginMetricsSamplePercent, every cycle
MAX_TUNED_PODS = 2_000_000  # a bound on the tuned workload (the paper's have about 10,000 pods)


def tune_workload(
    pods: Sequence[GpuPod], capacity_milli: int, ratio: float, rand: GoRand, max_pods: int = MAX_TUNED_PODS
) -> list[GpuPod]:
    """The pods in arrival order: shuffled, then cloned or pruned to `ratio` × GPU capacity.

    SortClusterPods with shufflePod: sort by name, rand.Shuffle. TunePodsByNodeTotalResource: below the
    target, tuneUpPods appends `<name>-tuned-<i>` clones of rand.Intn-chosen pods of the name-sorted trace until
    one would pass it (the test adds the clone's per-GPU milli, as the artifact does); above it, tuneDownPods
    removes rand.Intn-chosen pods until the total is at or below it. A workload without GPU requests or a
    cluster without GPUs is left as it is (the artifact refuses both).
    """
    ordered = sorted(pods, key=lambda p: p.name)
    rand.shuffled(ordered)
    total = sum(p.total_gpu_milli for p in ordered)
    target = ratio * float(capacity_milli)
    if ratio <= 0 or total <= 0 or capacity_milli <= 0 or float(total) == target:
        return ordered
    if float(total) > target:
        while float(total) > target:
            total -= ordered.pop(rand.intn(len(ordered))).total_gpu_milli
        return ordered
    trace = sorted(pods, key=lambda p: p.name)
    serial = 0
    while True:
        if len(ordered) >= max_pods:
            raise InputError(f"tuning the workload to {ratio:g} × GPU capacity takes more than {max_pods} pods")
        clone = trace[rand.intn(len(trace))]
        if float(total + clone.gpu_milli) > target:
            return ordered
        total += clone.total_gpu_milli
        ordered.append(
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


def seeded_stream(seed: int) -> GoRand:
    """The artifact's global rand after core.go Simulate's rand.Seed(seed) and the rand.Int() its debug log
    line evaluates (Go draws a call's arguments whether or not the line is printed)."""
    rand = GoRand(seed)
    rand.int63()
    return rand


def node_name_ranks(size: int, rand: GoRand) -> IntArray:
    """Each node's place in name order after the artifact renames them (nodes given sorted by name).

    syncClusterResourceList prefixes the i-th node by name with "%04d-" % rand.Perm(n)[i]; the fork's
    selectHost then takes the tied node with the smallest name, i.e. the smallest prefix.
    """
    return np.array(rand.perm(size), dtype=np.int64)


@dataclass(frozen=True, eq=False)
class RunResult:
    """One (policy, workload, seed) run: per-event curves (numpy arrays, small to keep and send between
    processes: a thousand runs fit in memory) and the discrete table row."""

    policy: str
    workload: str
    seed: int
    arrival: float
    capacity_milli: int
    arrived_milli: IntArray
    allocated_milli: IntArray
    frag_milli: FloatArray
    failed_pods: int
    pods: int
    discrete: dict[int, float] = field(default_factory=dict)

    @property
    def final_alloc_ratio(self) -> float:
        """Allocated GPU milli over capacity, percent, after the last arrival."""
        return 100.0 * int(self.allocated_milli[-1]) / self.capacity_milli if len(self.allocated_milli) else 0.0

    @property
    def alloc_at_arrival(self) -> float:
        """The published metric: allocation at the target arrival column (percent)."""
        column = round(self.arrival * 100)
        return self.discrete.get(column, self.final_alloc_ratio)

    @property
    def unallocated_gpus(self) -> float:
        """GPUs left unallocated after the last arrival."""
        return (self.capacity_milli - (int(self.allocated_milli[-1]) if len(self.allocated_milli) else 0)) / 1000


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
    """One run of the paper's method: the run the authors' simulator makes with tuning seed `seed`."""
    cluster = GpuCluster(sorted(nodes, key=lambda n: n.name))  # the scheduler's node order: created by name
    typical = typical_pods(trace)
    rand = seeded_stream(seed)
    pods = tune_workload(trace, cluster.total_gpu_milli, arrival, rand)
    for _ in range(INFORMER_WATCH_DRAWS):
        rand.float64()
    plugin = make_policy(policy, typical)
    framework = Framework(
        [Weighted(plugin, PAPER_WEIGHT)], tie_break=tie_break, name_rank=node_name_ranks(cluster.size, rand), draws=rand
    )
    # FGD's own node states are the metric's (one F_n(M) per state for both)
    metric = (
        plugin.states(cluster)
        if isinstance(plugin, FGDScore)
        else StateCache(cluster, FragModel(typical, cluster.model_names))
    )
    node_frag = metric.node_frag()
    changes: list[tuple[int, int, tuple[int, ...]]] = []  # (event, node, its state after): F_n(M) comes later
    arrived = allocated = failed = 0
    arrived_curve: list[int] = []
    alloc_curve: list[int] = []
    for i, pod in enumerate(pods):
        arrived += pod.total_gpu_milli
        rand.intn(PLUGIN_METRICS_DRAW)
        node = framework.schedule(cluster, pod)
        if node is None:
            failed += 1
            # DefaultPreemption (PostFilter) on the FitError: every node failed Unschedulable, not
            # UnschedulableAndUnresolvable, so all are candidates and getOffsetAndNumCandidates draws
            # rand.Int31n(len(nodes)); with equal priorities nothing is preempted
            rand.int31n(cluster.size)
        else:
            gpus = plugin.select_gpus(cluster, node, pod, framework.rng)
            cluster.bind(node, pod, gpus)
            plugin.bound(cluster, node)
            changes.append((i, node, StateCache.key(cluster, node)))
            allocated += pod.total_gpu_milli
        arrived_curve.append(arrived)
        alloc_curve.append(allocated)
        if progress is not None and i % 500 == 0:
            progress(i)
    cap = cluster.total_gpu_milli
    return RunResult(
        policy,
        workload,
        seed,
        arrival,
        cap,
        np.array(arrived_curve, dtype=np.int64),
        np.array(alloc_curve, dtype=np.int64),
        _frag_curve(metric, node_frag, changes, len(pods)),
        failed,
        len(pods),
        discretize(arrived_curve, alloc_curve, int(cluster.gpu_count.sum()), round(arrival * 100)),
    )


def _frag_curve(
    states: StateCache, node_frag: FloatArray, changes: Sequence[tuple[int, int, tuple[int, ...]]], events: int
) -> FloatArray:
    """The cluster's F(M) after each event, from its start and each bound node's new state (whose F_n(M)
    are computed in one vectorised call here rather than one per pod)."""
    after = states.intern_many([key for _, _, key in changes])
    total = float(node_frag.sum())
    curve = np.empty(events, dtype=np.float64)
    start = 0
    for (event, node, _), state in zip(changes, after, strict=True):
        curve[start:event] = total
        new = states.frag_of[state]
        total += new - float(node_frag[node])
        node_frag[node] = new
        start = event
    curve[start:] = total
    return curve


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
    runs: tuple[RowComparison, ...] = ()  # each seed against its published row, where there is one
    by_seed: tuple[float, ...] = ()  # each seed's allocation % at the arrival column, in `seeds` order

    @property
    def identical_runs(self) -> int:
        """Runs identical to their published row in every column."""
        return sum(1 for r in self.runs if r.matches)

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
            "gpu_alloc_ratio_by_seed": list(self.by_seed),
        }
        if self.published_mean is not None:
            out["published_mean"] = round(self.published_mean, 3)
            out["delta"] = round(self.gpu_alloc_ratio_mean - self.published_mean, 3)
        if self.runs:
            out["published_runs_compared"] = len(self.runs)
            out["published_runs_identical"] = self.identical_runs
            out["runs"] = [r.to_dict() for r in self.runs]
        return out


def compare_runs(runs: Sequence[RunResult], published: PublishedRuns) -> tuple[RowComparison, ...]:
    """Each run whose (workload, policy, arrival, seed) the authors published, compared with that row."""
    out: list[RowComparison] = []
    for r in runs:
        row = published.row(r.workload, r.policy, r.arrival, r.seed)
        if row is not None:
            out.append(compare_row(r.workload, r.policy, r.seed, r.discrete, row))
    return tuple(out)


def _published_mean(published: PublishedRuns, runs: Sequence[RunResult]) -> float | None:
    """The published mean over the seeds run, where they were published; else over every published seed."""
    column = round(runs[0].arrival * 100)
    rows = [published.row(r.workload, r.policy, r.arrival, r.seed) for r in runs]
    values = [row[column] for row in rows if row is not None and column in row]
    return sum(values) / len(values) if values else published.mean(runs[0].workload, runs[0].policy, column)


def summarize(results: Sequence[RunResult], published: PublishedRuns | None = None) -> list[Summary]:
    """Group runs by (workload, policy) in first-seen order, average over seeds, compare with published runs."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.workload, r.policy), []).append(r)
    out: list[Summary] = []
    for (workload, policy), runs in groups.items():
        ratios = np.array([r.alloc_at_arrival for r in runs])
        frag = np.array(
            [100.0 * float(r.frag_milli[-1]) / r.capacity_milli if len(r.frag_milli) else 0.0 for r in runs]
        )
        pub = _published_mean(published, runs) if published is not None else None
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
                compare_runs(runs, published) if published is not None else (),
                tuple(float(r) for r in ratios),
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
