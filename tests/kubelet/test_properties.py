"""Property tests: exclusive CPU sets never overlap or touch reserved CPUs; single-numa-node
admissions use one NUMA node; best-effort never rejects for topology; parsers fail cleanly."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubegpu.errors import InputError, KubegpuError
from kubegpu.kubelet import KubeletConfig, NodeState, PodRequest
from kubegpu.kubelet.bitmask import NUMAMask
from kubegpu.kubelet.hints import TopologyHint
from kubegpu.kubelet.topologymanager.manager import new_policy
from kubegpu.topology.presets import load_node
from tests.kubelet.scenarios import config

NODE = load_node("dgx-h100")
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

pod_shape = st.tuples(
    st.integers(min_value=1, max_value=64),  # whole CPUs
    st.integers(min_value=0, max_value=8),  # GPUs
    st.sampled_from(["8Gi", "64Gi", "200Gi"]),
    st.booleans(),  # with an init container
    st.booleans(),  # burstable (requests below limits)
)


def _pod(i: int, shape: tuple[int, int, str, bool, bool]) -> PodRequest:
    cpus, gpus, memory, with_init, burstable = shape
    limits: dict[str, Any] = {"cpu": str(cpus), "memory": memory}
    if gpus:
        limits["nvidia.com/gpu"] = gpus
    resources: dict[str, Any] = {"limits": limits}
    if burstable:
        resources["requests"] = {"cpu": "500m", "memory": "1Gi"}
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": resources}]}
    if with_init:
        spec["initContainers"] = [{"name": "init", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]
    return PodRequest.from_pod_spec(f"p{i}", spec)


policies = st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"])
scopes = st.sampled_from(["container", "pod"])


@SETTINGS
@given(policy=policies, scope=scopes, shapes=st.lists(pod_shape, min_size=1, max_size=12))
def test_exclusive_cpus_disjoint_and_never_reserved(
    policy: str, scope: str, shapes: list[tuple[int, int, str, bool, bool]]
) -> None:
    s = NodeState(NODE, config(topologyManagerPolicy=policy, topologyManagerScope=scope))
    assert s.cpu is not None
    reserved = set(s.reserved_cpus)
    per_pod: list[set[int]] = []
    for i, shape in enumerate(shapes):
        result = s.admit(_pod(i, shape))
        if not result.admitted:
            continue
        running: set[int] = set()
        for c in result.containers:
            assert not reserved & set(c.exclusive_cpus)
            if c.kind != "init":  # init containers finish first; apps may reuse their CPUs
                assert not running & set(c.exclusive_cpus)
                running |= set(c.exclusive_cpus)
        pod_all = {cpu for c in result.containers for cpu in c.exclusive_cpus}
        for other in per_pod:
            assert not other & pod_all
        per_pod.append(pod_all)
    # No exclusive CPU is also in the shared pool.
    shared = {c for c in range(NODE.num_cpus) if s.cpu_state.default >> c & 1}
    assert not shared & set().union(*per_pod)


@SETTINGS
@given(scope=scopes, shapes=st.lists(pod_shape, min_size=1, max_size=10))
def test_single_numa_node_admissions_use_one_numa_node(
    scope: str, shapes: list[tuple[int, int, str, bool, bool]]
) -> None:
    s = NodeState(NODE, config(topologyManagerPolicy="single-numa-node", topologyManagerScope=scope))
    gpu_numa = {str(g.index): g.numa_node for g in NODE.gpus}
    for i, shape in enumerate(shapes):
        result = s.admit(_pod(i, shape))
        if not result.admitted:
            continue
        for c in result.containers:
            nodes = {NODE.cpu_by_id[cpu].numa for cpu in c.exclusive_cpus}
            nodes |= {gpu_numa[d] for d in c.devices.get("nvidia.com/gpu", ())}
            nodes |= {n for per in c.memory.values() for n, b in per.items() if b}
            assert len(nodes) <= 1, (result.pod, c)


@SETTINGS
@given(scope=scopes, shapes=st.lists(pod_shape, min_size=1, max_size=10))
def test_best_effort_never_rejects_for_topology(scope: str, shapes: list[tuple[int, int, str, bool, bool]]) -> None:
    s = NodeState(
        NODE,
        config(
            topologyManagerPolicy="best-effort",
            topologyManagerScope=scope,
            memoryManagerPolicy="None",
            reservedMemory=[],
        ),
    )
    for i, shape in enumerate(shapes):
        cpus, gpus = shape[0], shape[1]
        assert s.cpu is not None
        free_cpus = (s.cpu_state.default & ~s.cpu.reserved).bit_count()
        free_gpus = len(s.free_gpus()["nvidia.com/gpu"])
        result = s.admit(_pod(i, shape))
        assert result.reason != "TopologyAffinityError"
        if cpus + 2 <= free_cpus and gpus <= free_gpus:
            assert result.admitted, result.message


masks = st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=4).map(NUMAMask.of)
hints = st.builds(TopologyHint, st.one_of(st.none(), masks), st.booleans())
answers = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(["cpu", "memory", "gpu"]),
        st.one_of(st.none(), st.lists(hints, max_size=4)),
        max_size=2,
    ),
)


@SETTINGS
@given(providers=st.lists(answers, max_size=3))
def test_restricted_admits_exactly_the_preferred_best_effort_merge(providers: list[Any]) -> None:
    nodes = (0, 1, 2, 3)
    be, _ = new_policy("best-effort", "pod", nodes, None)
    rs, _ = new_policy("restricted", "pod", nodes, None)
    snn, _ = new_policy("single-numa-node", "pod", nodes, None)
    merged = be.merge(providers)
    assert merged.admit
    assert rs.merge(providers).hint == merged.hint
    assert rs.merge(providers).admit == merged.hint.preferred
    single = snn.merge(providers)
    if single.admit and single.hint.affinity is not None:
        assert single.hint.affinity.count() == 1


quantity_text = st.one_of(st.text(max_size=6), st.integers(min_value=-5, max_value=10**6), st.floats(allow_nan=True))


@SETTINGS
@given(cpu=quantity_text, mem=quantity_text, gpu=quantity_text)
def test_pod_parser_accepts_quantities_or_raises_input_error(cpu: Any, mem: Any, gpu: Any) -> None:
    spec = {
        "containers": [
            {
                "name": "c",
                "resources": {"limits": {"cpu": cpu, "memory": mem, "nvidia.com/gpu": gpu}},
            }
        ]
    }
    try:
        pod = PodRequest.from_pod_spec("p", spec)
    except InputError:
        return
    NodeState(NODE, KubeletConfig()).admit(pod)


config_values = st.one_of(
    st.none(),
    st.text(max_size=8),
    st.integers(-3, 300),
    st.booleans(),
    st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=2),
)


@SETTINGS
@given(
    doc=st.fixed_dictionaries(
        {},
        optional={
            "cpuManagerPolicy": st.sampled_from(["none", "static", "x"]),
            "topologyManagerPolicy": config_values,
            "topologyManagerScope": config_values,
            "reservedSystemCPUs": config_values,
            "kubeReserved": config_values,
            "reservedMemory": st.one_of(config_values, st.lists(config_values, max_size=2)),
            "cpuManagerPolicyOptions": config_values,
            "memoryManagerPolicy": st.sampled_from(["None", "Static", "static"]),
        },
    )
)
def test_config_parser_fails_only_with_kubegpu_errors(doc: dict[str, Any]) -> None:
    try:
        cfg = KubeletConfig.from_dict(doc)
        NodeState(NODE, cfg)
    except KubegpuError:
        pass


GB200 = load_node("gb200-nvl72-tray")


@SETTINGS
@given(
    policy=policies,
    scope=scopes,
    shapes=st.lists(
        st.tuples(st.integers(1, 40), st.integers(0, 4), st.sampled_from(["8Gi", "100Gi"])),
        min_size=1,
        max_size=10,
    ),
)
def test_gb200_memory_only_numa_nodes_keep_allocations_consistent(
    policy: str, scope: str, shapes: list[tuple[int, int, str]]
) -> None:
    # The GB200 tray exposes GPU memory as CPU-less NUMA nodes: the Topology Manager sees all of
    # them, the CPU manager only the two Grace nodes. Allocations must stay exclusive and valid.
    s = NodeState(
        GB200,
        config(
            topologyManagerPolicy=policy,
            topologyManagerScope=scope,
            reservedSystemCPUs="0-1",
        ),
    )
    taken: set[int] = set()
    gpus: set[str] = set()
    for i, (cpus, n_gpus, memory) in enumerate(shapes):
        result = s.admit(_pod(i, (cpus, n_gpus, memory, False, False)))
        if not result.admitted:
            continue
        for c in result.containers:
            assert not taken & set(c.exclusive_cpus)
            assert not {0, 1} & set(c.exclusive_cpus)
            taken |= set(c.exclusive_cpus)
            ids = set(c.devices.get("nvidia.com/gpu", ()))
            assert not gpus & ids
            gpus |= ids
