"""Event-mode simulation runs as typed objects: the cluster, the workload, the run matrix and each run's result.

Builds on kubegpu.sim.simulation (scheduler model over simulated time, kubelet admission on preset nodes); the
command line only turns its options into an EventsPlan and hands the runs to the report layer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.kubelet.config import KubeletConfig
from kubegpu.scheduler.gang import GangMode
from kubegpu.scheduler.gpu.state import NodeSpec
from kubegpu.scheduler.tas import Algorithm
from kubegpu.sim.simulation import SimConfig, Simulation
from kubegpu.sim.traces.openb import read_pods
from kubegpu.sim.workload import Job, jobs_from_pods, load_job_manifests, synthetic_jobs
from kubegpu.topology.model import NodeTopology

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class Cluster:
    """The nodes, their hardware profiles (for kubelet admission; None where a node has none) and the topology
    levels of a cluster spec (None: the default levels)."""

    nodes: tuple[NodeSpec, ...]
    profiles: tuple[NodeTopology | None, ...] | None = None
    levels: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SyntheticJobs:
    """Generated jobs: how many, their arrival rate, gang sizes and GPUs per pod to draw from, mean duration."""

    count: int
    rate_per_hour: float
    gang_sizes: tuple[int, ...]
    gpus_per_pod: tuple[int, ...]
    duration_hours: float


@dataclass(frozen=True)
class Workload:
    """Where the jobs come from: openb pod CSVs, YAML job manifests, or synthetic jobs (which take precedence)."""

    files: tuple[Path, ...] = ()
    synthetic: SyntheticJobs | None = None

    def __post_init__(self) -> None:
        if self.synthetic is None and not self.files:
            raise InputError("give --pods or --synthetic N")

    def jobs(self, seed: int) -> list[Job]:
        """The jobs of one run (synthetic jobs depend on the seed)."""
        if self.synthetic is not None:
            s = self.synthetic
            return synthetic_jobs(
                s.count,
                seed,
                s.rate_per_hour / SECONDS_PER_HOUR,
                s.gang_sizes,
                s.gpus_per_pod,
                s.duration_hours * SECONDS_PER_HOUR,
            )
        if all(p.suffix.lower() == ".csv" for p in self.files):
            return [j for p in self.files for j in jobs_from_pods(read_pods(p))]
        return load_job_manifests(self.files)


@dataclass(frozen=True)
class EventsPlan:
    """The run matrix: every policy × seed × gang mode over one cluster and workload."""

    cluster: Cluster
    workload: Workload
    policies: tuple[str, ...]
    seeds: tuple[int, ...]
    gangs: tuple[GangMode, ...] = (GangMode.ALL_OR_NOTHING,)
    tas_algorithm: Algorithm | None = None
    tie_break: str = "random"
    kubelet: KubeletConfig | None = None

    def configs(self) -> list[SimConfig]:
        return [
            SimConfig(
                policy=p,
                seed=s,
                gang=g,
                tas_algorithm=self.tas_algorithm,
                tie_break=self.tie_break,
                kubelet=self.kubelet,
            )
            for p in self.policies
            for s in self.seeds
            for g in self.gangs
        ]


@dataclass(frozen=True)
class EventsRun:
    """One run's totals (SimulationResult.summary) and its GPU allocation over time (percent of capacity)."""

    config: SimConfig
    summary: Mapping[str, object]
    times: tuple[float, ...]
    allocation_pct: tuple[float, ...]

    @property
    def label(self) -> str:
        return f"{self.config.policy}/{self.config.gang.value}/{self.config.seed}"


def run_events(plan: EventsPlan, on_done: Callable[[], None] = lambda: None) -> list[EventsRun]:
    """Run every configuration of the plan in order; `on_done` is called after each run (progress)."""
    runs: list[EventsRun] = []
    cluster = plan.cluster
    for config in plan.configs():
        result = Simulation(
            cluster.nodes, plan.workload.jobs(config.seed), config, cluster.levels, cluster.profiles
        ).run()
        runs.append(
            EventsRun(
                config,
                result.summary(),
                tuple(result.times),
                tuple(100.0 * a / result.capacity_milli for a in result.allocated_milli),
            )
        )
        on_done()
    return runs


def gang_modes(text: str) -> tuple[GangMode, ...]:
    """`all-or-nothing`, `pod-by-pod` or `both`; InputError otherwise."""
    if text == "both":
        return tuple(GangMode)
    if text in {m.value for m in GangMode}:
        return (GangMode(text),)
    raise InputError(f"--gang: {text!r}; choose all-or-nothing, pod-by-pod or both")


def series(runs: Sequence[EventsRun]) -> dict[str, tuple[Sequence[float], Sequence[float]]]:
    """label -> (times, allocation %) for a timeline plot."""
    return {r.label: (r.times, r.allocation_pct) for r in runs}
