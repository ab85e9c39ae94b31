"""gen kubelet: for every GPU preset the kubelet model starts with the config and admits the pod."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.errors import InputError
from kubegpu.generate import kubelet as gen
from kubegpu.generate.validate import validate_object
from kubegpu.kubelet import KubeletConfig, NodeState, check_startup
from kubegpu.topology.presets import load_preset, preset_names
from kubegpu.units.quantity import parse_quantity

GOLDEN = Path(__file__).parent / "golden"
GPU_PRESETS = [name for name in preset_names() if load_preset(name).gpus]
NO_GPU_PRESETS = [name for name in preset_names() if not load_preset(name).gpus]


def _render(name: str, options: gen.KubeletOptions) -> tuple[dict, gen.KubeletPlan]:
    result, plan = gen.generate(load_preset(name), options)
    text = result.render()
    config = yaml.safe_load(text)
    assert config == plan.config
    return config, plan


@pytest.mark.parametrize("name", GPU_PRESETS)
def test_every_gpu_preset_starts_and_admits_the_largest_pod(name: str) -> None:
    node = load_preset(name)
    config, plan = _render(name, gen.KubeletOptions())
    validate_object(config)
    kc = KubeletConfig.from_dict(config, source=f"gen-{name}")
    assert check_startup(node, kc) is None
    state = NodeState(node, kc)
    pod = gen.pod_request(plan.shape, node.gpus[0].resource_name)
    result = state.admit(pod)
    assert result.admitted, (result.reason, result.message)
    assert plan.shape.gpus == len(node.gpus)
    # every stricter policy was tried and rejected the same pod
    order = gen.POLICIES
    chosen = order.index(config["topologyManagerPolicy"])
    assert [t.policy for t in plan.trials] == list(order[: chosen + 1])
    assert all(not t.admitted for t in plan.trials[:-1])


@pytest.mark.parametrize("name", GPU_PRESETS)
def test_reserved_cpus_are_whole_cores_on_one_numa_node(name: str) -> None:
    node = load_preset(name)
    for cores in (1, 2, 4):
        config, plan = _render(name, gen.KubeletOptions(reserve_cores=cores))
        reserved = set(plan.reserved_cpus)
        assert len({node.cpu_by_id[c].core for c in reserved}) == cores
        for cpu in reserved:
            assert set(node.siblings(cpu)) <= reserved
        assert {node.cpu_by_id[c].numa for c in reserved} == {plan.reserved_numa}
        if node.threads_per_core > 1:
            assert config["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}
        else:
            assert "cpuManagerPolicyOptions" not in config


@pytest.mark.parametrize(("kube", "system"), [("2Gi", "2Gi"), ("1536Mi", "3Gi"), ("4G", "1G")])
def test_reserved_memory_adds_up_exactly(kube: str, system: str) -> None:
    config, _ = _render("dgx-h100", gen.KubeletOptions(kube_reserved_memory=kube, system_reserved_memory=system))
    total = sum(parse_quantity(r["limits"]["memory"]).ceil for r in config["reservedMemory"])
    expected = (
        parse_quantity(kube).ceil
        + parse_quantity(system).ceil
        + parse_quantity(config["evictionHard"]["memory.available"]).ceil
    )
    assert total == expected
    assert config["kubeReserved"] == {"memory": kube}


def test_single_numa_when_the_pod_fits_one_node() -> None:
    config, plan = _render("dgx-h100", gen.KubeletOptions(largest_gpu_pod="4:64:512Gi"))
    assert config["topologyManagerPolicy"] == "single-numa-node"
    assert [t.policy for t in plan.trials] == ["single-numa-node"]
    assert plan.admission.containers[0].numa_affinity is not None
    assert len(plan.admission.containers[0].numa_affinity) == 1


def test_prefer_closest_numa_nodes_on_many_numa_nodes() -> None:
    config, _ = _render("gb200-nvl72-tray", gen.KubeletOptions())
    assert config["topologyManagerPolicy"] == "restricted"
    assert config["topologyManagerPolicyOptions"] == {"prefer-closest-numa-nodes": "true"}


def test_pod_bigger_than_the_node(data_dir: Path) -> None:
    with pytest.raises(InputError, match="asks for 8 GPUs but node 'gb200-nvl72-tray' has 4"):
        gen.generate(
            load_preset("gb200-nvl72-tray"),
            gen.KubeletOptions(largest_gpu_pod=str(data_dir / "train-job.yaml")),
        )


def test_largest_pod_from_manifest_uses_the_real_pod(data_dir: Path) -> None:
    _, plan = _render("dgx-h100", gen.KubeletOptions(largest_gpu_pod=str(data_dir / "train-job.yaml")))
    assert plan.shape.gpus == 8
    assert plan.shape.spec is not None
    assert "train-job.yaml" in plan.shape.source


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("2", (2, None, None)),
        ("2:32", (2, 32000, None)),
        ("2:32:256Gi", (2, 32000, 256 * 2**30)),
        ("gpus=2,cpu=16,memory=100Gi", (2, 16000, 100 * 2**30)),
    ],
)
def test_shapes(spec: str, expected: tuple[int, int | None, int | None]) -> None:
    node = load_preset("dgx-h100")
    shape = gen.parse_shape(spec, node, 200_000, 1000 * 2**30)
    assert shape.gpus == expected[0]
    if expected[1] is not None:
        assert shape.cpu_millis == expected[1]
    else:
        assert shape.cpu_millis % 2000 == 0  # scaled shares stay whole cores on SMT
    if expected[2] is not None:
        assert shape.memory_bytes == expected[2]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (gen.KubeletOptions(largest_gpu_pod="9"), "has 8"),
        (gen.KubeletOptions(largest_gpu_pod="2:3:10Gi"), "SMTAlignmentError"),
        (gen.KubeletOptions(largest_gpu_pod="x=1"), "cannot read"),
        (gen.KubeletOptions(reserve_cores=0), "at least 1"),
        (gen.KubeletOptions(reserve_cores=56), "has only 56 cores"),
        (gen.KubeletOptions(kube_reserved_memory="0"), "must be positive"),
    ],
)
def test_bad_requests(options: gen.KubeletOptions, message: str) -> None:
    with pytest.raises(InputError, match=message):
        gen.generate(load_preset("dgx-h100"), options)


@pytest.mark.parametrize("name", NO_GPU_PRESETS[:1])
def test_nodes_without_gpus(name: str) -> None:
    with pytest.raises(InputError, match="no GPUs"):
        gen.generate(load_preset(name), gen.KubeletOptions())


@pytest.mark.parametrize("name", ["dgx-h100", "gb200-nvl72-tray"])
def test_golden(name: str) -> None:
    text = gen.generate(load_preset(name), gen.KubeletOptions())[0].render()
    path = GOLDEN / f"kubelet-{name}.yaml"
    if os.environ.get("KUBEGPU_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


@settings(max_examples=25, deadline=None)
@given(
    gpus=st.integers(min_value=1, max_value=8),
    cores=st.integers(min_value=1, max_value=100),
    mem_gib=st.integers(min_value=1, max_value=1900),
)
def test_emitted_policy_is_the_strictest_that_admits(gpus: int, cores: int, mem_gib: int) -> None:
    """Re-run the rendered YAML through the model with every policy: stricter ones reject."""
    node = load_preset("dgx-h100")
    shape = f"{gpus}:{cores * 2}:{mem_gib}Gi"
    try:
        result, plan = gen.generate(node, gen.KubeletOptions(largest_gpu_pod=shape))
    except InputError as err:
        assert "cannot admit" in str(err)
        return
    config = yaml.safe_load(result.render())
    pod = gen.pod_request(plan.shape, "nvidia.com/gpu")
    chosen = gen.POLICIES.index(config["topologyManagerPolicy"])
    for i, policy in enumerate(gen.POLICIES[: chosen + 1]):
        variant = {**config, "topologyManagerPolicy": policy}
        if policy not in ("restricted", "best-effort"):
            variant.pop("topologyManagerPolicyOptions", None)
        admitted = NodeState(node, KubeletConfig.from_dict(variant)).admit(pod).admitted
        assert admitted == (i == chosen), (policy, shape)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_shape_parser_never_crashes(text: str) -> None:
    node = load_preset("dgx-h100")
    try:
        shape = gen.parse_shape(text, node, 200_000, 1000 * 2**30)
    except InputError:
        return
    assert 1 <= shape.gpus <= 8 and shape.cpu_millis > 0 and shape.memory_bytes > 0


def test_gpus_without_numa_node_are_called_out(tmp_path: Path) -> None:
    import dataclasses

    node = load_preset("dgx-h100")
    vm = dataclasses.replace(node, gpus=tuple(dataclasses.replace(g, numa_node=None) for g in node.gpus))
    result, plan = gen.generate(vm, gen.KubeletOptions(largest_gpu_pod="8:100:900Gi"))
    assert plan.policy == "single-numa-node"  # nothing to align the GPUs with: CPUs+memory fit
    assert "8 GPU(s) have no NUMA node" in result.render()
