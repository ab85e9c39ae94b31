"""Replay jobs through the scheduler model over simulated time: arrivals, gang admission, topology
placement, kubelet admission on the chosen node, completions, and the metrics of the run.

Builds on kubegpu.scheduler (kube-scheduler v1.35 framework, Kueue TAS, Volcano-style gangs) and
kubegpu.kubelet (v1.35 admission) when nodes carry hardware profiles and a kubelet config is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubegpu.kubelet import KubeletConfig, NodeState, PodRequest
from kubegpu.scheduler.framework import ADAPTIVE_PERCENTAGE, Framework
from kubegpu.scheduler.gang import Binding, GangMode, bind, place_group, unbind
from kubegpu.scheduler.gpu.fragmentation import FragModel, StateCache, typical_pods
from kubegpu.scheduler.gpu.registry import make_profile
from kubegpu.scheduler.gpu.state import GpuCluster, NodeSpec
from kubegpu.scheduler.tas import Algorithm, TopologyTree, assign, pods_that_fit
from kubegpu.sim.engine import ARRIVAL, COMPLETION, RETRY, EventLoop
from kubegpu.sim.workload import Job
from kubegpu.topology.model import NodeTopology


@dataclass(frozen=True)
class SimConfig:
    """How to schedule: profile, seed, gang mode, TAS algorithm override and tie-breaking."""

    policy: str = "k8s-default"
    seed: int = 42
    gang: GangMode = GangMode.ALL_OR_NOTHING
    tas_algorithm: Algorithm | None = None
    percentage_of_nodes_to_score: int = ADAPTIVE_PERCENTAGE
    tie_break: str = "random"
    kubelet: KubeletConfig | None = None


@dataclass(frozen=True)
class JobRecord:
    """What happened to one job."""

    name: str
    pods: int
    gpu_milli: int
    arrival: float
    start: float | None
    end: float | None
    domains: dict[str, int]
    state: str  # completed, running, pending, deadlocked


@dataclass(frozen=True)
class SimulationResult:
    """Per-job records, time series and totals of one simulation."""

    policy: str
    gang: str
    seed: int
    capacity_milli: int
    jobs: tuple[JobRecord, ...]
    times: tuple[float, ...]
    allocated_milli: tuple[int, ...]
    arrived_milli: tuple[int, ...]
    frag_milli: tuple[float, ...]
    kubelet_rejections: dict[str, int] = field(default_factory=dict)
    rolled_back_pods: int = 0
    idle_held_gpu_seconds: float = 0.0

    def _count(self, state: str) -> int:
        return sum(j.pods for j in self.jobs if j.state == state)

    def summary(self) -> dict[str, object]:
        """Totals for tables and JSON."""
        waits = [j.start - j.arrival for j in self.jobs if j.start is not None]
        spans = [j.domains for j in self.jobs if j.domains and j.pods > 1]
        peak = max(self.allocated_milli) if self.allocated_milli else 0
        out: dict[str, object] = {
            "policy": self.policy,
            "gang": self.gang,
            "seed": self.seed,
            "jobs": len(self.jobs),
            "pods": sum(j.pods for j in self.jobs),
            "gpu_alloc_ratio_peak": round(100.0 * peak / self.capacity_milli, 3),
            "gpu_alloc_ratio_vs_arrived": round(
                100.0
                * sum(j.gpu_milli for j in self.jobs if j.start is not None)
                / max(1, sum(j.gpu_milli for j in self.jobs)),
                3,
            ),
            "unallocated_gpus_end": round(
                (self.capacity_milli - (self.allocated_milli[-1] if self.allocated_milli else 0)) / 1000, 1
            ),
            "frag_pct_of_capacity_end": round(
                100.0 * (self.frag_milli[-1] if self.frag_milli else 0.0) / self.capacity_milli, 3
            ),
            "wait_mean_s": round(float(np.mean(waits)), 1) if waits else None,
            "wait_p95_s": round(float(np.percentile(waits, 95)), 1) if waits else None,
            "completed_pods": self._count("completed"),
            "running_pods": self._count("running"),
            "pending_pods": self._count("pending"),
            "deadlocked_pods": self._count("deadlocked"),
            "rolled_back_pods": self.rolled_back_pods,
            "idle_held_gpu_hours": round(self.idle_held_gpu_seconds / 3600, 2),
            "kubelet_rejections": dict(self.kubelet_rejections),
        }
        if spans:
            for level in spans[0]:
                out[f"mean_{level.rsplit('/', 1)[-1]}_spanned"] = round(float(np.mean([s[level] for s in spans])), 3)
        return out


class _Kubelets:
    """Per-node kubelet admission (one NodeState per node with a profile); a completed pod is released."""

    def __init__(self, profiles: Sequence[NodeTopology | None], config: KubeletConfig) -> None:
        self.states = [NodeState(p, config) if p is not None else None for p in profiles]
        self.admitted: list[dict[str, str]] = [{} for _ in profiles]  # per node: pod name -> the node's key
        self.rejections: dict[str, int] = {}

    @staticmethod
    def request(b: Binding, gpu_resource: str) -> PodRequest:
        """The pod the kubelet admits: the real pod when it came from a manifest (its own containers, QoS
        and requests); a trace row has no pod spec, so one Guaranteed container with its requests."""
        if b.pod.spec is not None:
            return PodRequest.from_model(b.pod.name, b.pod.spec)
        req: dict[str, object] = {"cpu": f"{b.pod.cpu_milli}m", "memory": str(b.pod.memory_bytes)}
        if b.pod.is_gpu and not b.pod.is_share:
            req[gpu_resource] = str(b.pod.gpu_count)
        spec = {"containers": [{"name": "main", "resources": {"requests": req, "limits": req}}]}
        return PodRequest.from_pod_spec(b.pod.name, spec)

    def admit(self, b: Binding) -> bool:
        state = self.states[b.node]
        if state is None:
            return True
        gpus = state.node.gpus
        pod = self.request(b, gpus[0].resource_name if gpus else "nvidia.com/gpu")
        result = state.admit(pod)
        if result.admitted:
            self.admitted[b.node][b.pod.name] = result.pod_key
            return True
        self.rejections[result.reason] = self.rejections.get(result.reason, 0) + 1
        return False

    def release(self, b: Binding) -> None:
        state = self.states[b.node]
        key = self.admitted[b.node].pop(b.pod.name, None)
        if state is not None and key is not None:
            state.release(key)


class Simulation:
    """One run: jobs arrive, wait in a BestEffortFIFO queue, are placed and later complete."""

    def __init__(
        self,
        nodes: Sequence[NodeSpec],
        jobs: Sequence[Job],
        config: SimConfig,
        levels: Sequence[str] | None = None,
        profiles: Sequence[NodeTopology | None] | None = None,
    ) -> None:
        self.cluster = GpuCluster(nodes)
        self.jobs = sorted(jobs, key=lambda j: (j.arrival, j.name))
        self.config = config
        all_pods = [p for j in self.jobs for p in j.pods]
        typical = typical_pods(all_pods)
        scorers, self.selector = make_profile(config.policy, typical)
        self.framework = Framework(
            scorers,
            percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
            seed=config.seed,
            tie_break=config.tie_break,
        )
        self.tree = TopologyTree(self.cluster, levels) if levels else TopologyTree(self.cluster)
        self.metric = StateCache(self.cluster, FragModel(typical, self.cluster.model_names))
        self.node_frag = self.metric.node_frag()
        self.kubelets = (
            _Kubelets(profiles, config.kubelet)
            if profiles is not None and config.kubelet is not None and any(profiles)
            else None
        )
        self.loop = EventLoop()
        self.pending: list[Job] = []
        self.partial: dict[str, list[Binding]] = {}
        self.started: dict[str, float] = {}
        self.ended: dict[str, float] = {}
        self.nodes_of: dict[str, list[int]] = {}
        self.arrived = 0
        self.allocated = 0
        self.rolled_back = 0
        self.idle_held = 0.0
        self._last_t = 0.0
        self._drain_due = False
        self.times: list[float] = []
        self.alloc_series: list[int] = []
        self.arrived_series: list[int] = []
        self.frag_series: list[float] = []

    def _record(self) -> None:
        now = self.loop.now
        held = sum(sum(b.pod.total_gpu_milli for b in bs) for n, bs in self.partial.items())
        self.idle_held += held / 1000 * (now - self._last_t)
        self._last_t = now
        self.times.append(now)
        self.alloc_series.append(self.allocated)
        self.arrived_series.append(self.arrived)
        self.frag_series.append(float(self.node_frag.sum()))

    def _touch(self, node: int) -> None:
        self.metric.update(self.cluster, node)
        self.node_frag[node] = self.metric.frag_of[int(self.metric.node_state[node])]

    def _bind_ok(self, bindings: list[Binding]) -> list[Binding]:
        if self.kubelets is None:
            return bindings
        kept: list[Binding] = []
        for b in bindings:
            if self.kubelets.admit(b):
                kept.append(b)
            else:
                unbind(self.cluster, self.selector, b)
        return kept

    def _try(self, job: Job) -> bool:
        have = self.partial.get(job.name, [])
        todo = [p for p in job.pods if p.name not in {b.pod.name for b in have}]
        plan = None
        if job.topology is not None and todo:
            per_node = pods_that_fit(self.cluster, todo[0])
            found = assign(self.tree, per_node, len(todo), job.topology, self.config.tas_algorithm)
            if found is None:
                return False
            plan = found.counts
        mode = self.config.gang if len(job.pods) > 1 else GangMode.POD_BY_POD
        # quota-style pre-check (Kueue/Volcano enqueue): skip gangs that cannot fit at all
        if (
            mode is GangMode.ALL_OR_NOTHING
            and plan is None
            and todo
            and int(pods_that_fit(self.cluster, todo[0]).sum()) < len(todo)
        ):
            return False
        need = None if job.min_member is None else max(0, job.min_member - len(have))
        result = place_group(self.cluster, self.framework, self.selector, todo, mode, need, plan=plan)
        self.rolled_back += result.rolled_back
        bound = self._bind_ok(result.bound)
        for b in bound:
            self._touch(b.node)
        if mode is GangMode.ALL_OR_NOTHING and len(bound) < len(result.bound):
            for b in bound:  # the kubelet refused part of the gang: release the rest too
                unbind(self.cluster, self.selector, b)
                self._touch(b.node)
                if self.kubelets is not None:
                    self.kubelets.release(b)
            bound = []
        self.allocated += sum(b.pod.total_gpu_milli for b in bound)
        have = have + bound
        done = len(have) >= (job.min_member or len(job.pods)) and len(have) == len(job.pods)
        if not done:
            if have:
                self.partial[job.name] = have
            return False
        self._start(job, have)
        return True

    def _start(self, job: Job, have: list[Binding]) -> None:
        self.partial.pop(job.name, None)
        self.started[job.name] = self.loop.now
        self.nodes_of[job.name] = [b.node for b in have]
        if job.duration is not None:
            self.loop.at(self.loop.now + job.duration, COMPLETION, lambda: self._complete(job, have))

    def _interleaved(self, jobs: list[Job]) -> set[str]:
        """kube-scheduler without gangs: pods of all waiting jobs queue together (round robin by
        creation) and each is bound as soon as it fits; returns the jobs that became complete."""
        queues = {
            j.name: [p for p in j.pods if p.name not in {b.pod.name for b in self.partial.get(j.name, [])}]
            for j in jobs
        }
        while any(queues.values()):
            for job in jobs:
                if not queues[job.name]:
                    continue
                pod = queues[job.name].pop(0)
                node = self.framework.schedule(self.cluster, pod)
                if node is None:
                    continue
                b = bind(self.cluster, self.selector, self.framework, pod, node)
                if not self._bind_ok([b]):
                    continue
                self._touch(node)
                self.allocated += pod.total_gpu_milli
                self.partial.setdefault(job.name, []).append(b)
        done: set[str] = set()
        for job in jobs:
            have = self.partial.get(job.name, [])
            if len(have) == len(job.pods):
                self._start(job, have)
                done.add(job.name)
        return done

    def _drain(self) -> None:
        self._drain_due = False
        still: list[Job] = []
        loose = [j for j in self.pending if j.topology is None] if self.config.gang is GangMode.POD_BY_POD else []
        done = self._interleaved(loose) if loose else set()
        loose_names = {j.name for j in loose}
        for job in self.pending:
            if job.name in loose_names:
                if job.name not in done:
                    still.append(job)
                continue
            if not self._try(job):
                still.append(job)
        self.pending = still
        self._record()

    def _wake(self) -> None:
        if not self._drain_due:
            self._drain_due = True
            self.loop.at(self.loop.now, RETRY, self._drain)

    def _arrive(self, job: Job) -> None:
        self.arrived += job.gpu_milli
        self.pending.append(job)
        self._wake()

    def _complete(self, job: Job, bindings: list[Binding]) -> None:
        for b in bindings:
            unbind(self.cluster, self.selector, b)
            self._touch(b.node)
            if self.kubelets is not None:
                self.kubelets.release(b)
        self.allocated -= sum(b.pod.total_gpu_milli for b in bindings)
        self.arrived -= job.gpu_milli
        self.ended[job.name] = self.loop.now
        self._wake()

    def run(self, progress: Callable[[int], None] | None = None) -> SimulationResult:
        """Run to the end; pods still holding partial allocations when nothing else can happen
        are reported as deadlocked."""
        for job in self.jobs:
            self.loop.at(job.arrival, ARRIVAL, lambda job=job: self._arrive(job))  # type: ignore[misc]
        step = 0
        while len(self.loop):
            self.loop.run(max_events=self.loop.processed + 1000)
            step += 1
            if progress is not None:
                progress(self.loop.processed)
        self.cluster.check_invariants()
        records = []
        for job in self.jobs:
            if job.name in self.ended:
                state = "completed"
            elif job.name in self.started:
                state = "running"
            elif job.name in self.partial:
                state = "deadlocked"
            else:
                state = "pending"
            nodes = self.nodes_of.get(job.name, [b.node for b in self.partial.get(job.name, [])])
            records.append(
                JobRecord(
                    job.name,
                    len(job.pods),
                    job.gpu_milli,
                    job.arrival,
                    self.started.get(job.name),
                    self.ended.get(job.name),
                    self.tree.spanned(nodes) if nodes else {},
                    state,
                )
            )
        return SimulationResult(
            self.config.policy,
            self.config.gang.value,
            self.config.seed,
            self.cluster.total_gpu_milli,
            tuple(records),
            tuple(self.times),
            tuple(self.alloc_series),
            tuple(self.arrived_series),
            tuple(self.frag_series),
            dict(self.kubelets.rejections) if self.kubelets else {},
            self.rolled_back,
            self.idle_held,
        )
