"""The one pod model: upstream PodRequests/PodLimits and ComputePodQOS vectors, defaulting, accelerators."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.errors import InputError
from kubegpu.manifests import pod as podmodel
from kubegpu.manifests.accelerators import (
    DEFAULT_ACCELERATOR_RESOURCES,
    DEFAULT_REGISTRY,
    HAMI_RESOURCES,
    AcceleratorRegistry,
    is_accelerator,
)
from kubegpu.units import parse_quantity

VECTORS = Path(__file__).parent / "vectors"


def _load(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = yaml.safe_load((VECTORS / name).read_text(encoding="utf-8"))
    return cases


def _exact(values: dict[str, Any]) -> dict[str, Decimal]:
    return {str(k): parse_quantity(v).value for k, v in values.items()}


@pytest.mark.parametrize("case", _load("pod_resources.yaml"), ids=lambda c: f"{c['test']}: {c['name']}")
def test_pod_requests_and_limits_follow_upstream(case: dict[str, Any]) -> None:
    pod = podmodel.read_pod_spec(case["spec"], defaults=False)
    options = case.get("options", {})
    pod_level = not options.get("skip_pod_level", False)
    overhead = not options.get("exclude_overhead", False)
    if "requests" in case:
        assert podmodel.pod_requests(pod, pod_level=pod_level, overhead=overhead) == _exact(case["requests"])
    if "limits" in case:
        assert podmodel.pod_limits(pod, pod_level=pod_level, overhead=overhead) == _exact(case["limits"])


@pytest.mark.parametrize("case", _load("pod_qos.yaml"), ids=lambda c: str(c["name"]))
def test_qos_class_follows_upstream(case: dict[str, Any]) -> None:
    pod = podmodel.read_pod_spec(case["spec"], defaults=False)
    assert podmodel.qos_class(pod, bool(case.get("pod_level", False))) == case["expected"]


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        # TestIsPodLevelResourcesSet (helpers_test.go)
        (None, False),
        ({}, False),
        ({"requests": {"ephemeral-storage": "1Mi"}}, False),
        ({"limits": {"ephemeral-storage": "1Mi"}}, False),
        ({"requests": {"ephemeral-storage": "1Mi", "cpu": "1m"}}, True),
        ({"limits": {"ephemeral-storage": "1Mi", "cpu": "1m"}}, True),
    ],
)
def test_pod_level_resources_set(resources: dict[str, Any] | None, expected: bool) -> None:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if resources is not None:
        spec["resources"] = resources
    assert podmodel.pod_level_resources_set(podmodel.read_pod_spec(spec, defaults=False)) is expected


def test_container_requests_default_to_limits() -> None:
    pod = podmodel.read_pod_spec(
        {
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}}}
            ]
        }
    )
    assert pod.containers[0].requests == {"cpu": Decimal(1), "memory": Decimal(2**30)}


def test_pod_level_requests_default_from_containers_then_limits() -> None:
    # defaultPodRequests: cpu comes from the containers' aggregate request, memory (not requested by any
    # container) from the pod-level limit; defaultHugePagePodLimits fills a hugepages limit from the containers.
    spec = {
        "resources": {"limits": {"cpu": "4", "memory": "8Gi"}},
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3"}}}],
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"hugepages-2Mi": "4Mi"}}}],
    }
    pod = podmodel.read_pod_spec(spec)
    assert pod.resources is not None
    assert pod.resources.requests == {
        "cpu": Decimal(3),
        "memory": Decimal(8 * 2**30),
        "hugepages-2Mi": Decimal(4 * 2**20),
    }
    assert pod.resources.limits["hugepages-2Mi"] == Decimal(4 * 2**20)
    assert podmodel.qos_class(pod) == podmodel.BURSTABLE


def test_empty_pod_resources_make_the_pod_best_effort() -> None:
    spec = {
        "resources": {},
        "containers": [{"name": "c", "resources": {"limits": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}}}],
    }
    pod = podmodel.read_pod_spec(spec)
    assert podmodel.qos_class(pod) == podmodel.BEST_EFFORT
    assert podmodel.qos_class(pod, pod_level_resources=False) == podmodel.GUARANTEED
    assert not podmodel.pod_level_resources_set(pod)  # requests still come from the containers
    assert podmodel.pod_requests(pod)["cpu"] == 8


def test_scheduler_non_zero_defaults_fill_only_missing_requests() -> None:
    spec = {"containers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "0"}}}]}
    pod = podmodel.read_pod_spec(spec)
    filled = podmodel.pod_requests(pod, non_missing={"cpu": Decimal("0.1"), "memory": Decimal(200 * 2**20)})
    assert filled == {"cpu": Decimal("0.1"), "memory": Decimal(400 * 2**20)}


def test_strict_reading_names_the_field() -> None:
    with pytest.raises(InputError, match=r"pod p: spec\.containers\[0\]\.resources\.limits\.cpu: "):
        podmodel.read_pod_spec(
            {"containers": [{"name": "c", "resources": {"limits": {"cpu": "x"}}}]}, where="pod p: spec"
        )
    with pytest.raises(InputError, match="must not be negative"):
        podmodel.read_pod_spec({"containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]})
    lenient = podmodel.read_pod_spec(
        {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "two"}}}]}, strict=False
    )
    assert lenient.containers[0].invalid == ("nvidia.com/gpu",)
    assert podmodel.uses_accelerators(lenient)  # an unreadable GPU count is still a GPU request


@pytest.mark.parametrize(
    "name",
    [
        "nvidia.com/gpu",
        "nvidia.com/mig-1g.10gb",
        "nvidia.com/gpu.shared",
        "nvidia.com/pgpu",  # the NVIDIA sandbox device plugin's default name for passthrough GPUs (Kata)
        "amd.com/gpu",
        "gpu.intel.com/i915",
        "gpu.intel.com/xe",
        "habana.ai/gaudi",
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "aws.amazon.com/neurondevice",
        "google.com/tpu",
        "nvidia.com/gpumem",
        "nvidia.com/gpucores",
    ],
)
def test_default_registry_knows_every_vendor(name: str) -> None:
    assert DEFAULT_REGISTRY.is_accelerator(name)


def test_registry_is_configurable_and_hami_shares_are_not_devices() -> None:
    custom = AcceleratorRegistry(("example.com/fpga",))
    assert custom.is_accelerator("example.com/fpga") and not custom.is_accelerator("nvidia.com/gpu")
    assert not DEFAULT_REGISTRY.is_accelerator("cpu") and not DEFAULT_REGISTRY.is_accelerator("nvidia.com/gpux")
    assert not DEFAULT_REGISTRY.is_accelerator("nvidia.com/nvswitch")  # NVSwitch passthrough is not a GPU
    assert not DEFAULT_REGISTRY.counts_devices("nvidia.com/gpumem")
    limits = {"nvidia.com/gpu": "2", "nvidia.com/gpumem": "4000"}
    spec = {"containers": [{"name": "c", "resources": {"limits": limits}}]}
    assert podmodel.device_count(podmodel.read_pod_spec(spec)) == 2


_RESOURCE_WORDS = st.sampled_from(
    [*DEFAULT_ACCELERATOR_RESOURCES, *HAMI_RESOURCES, "cpu", "memory", "example.com/", "example.com/fpga", "x-", "1g"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_RESOURCE_WORDS, max_size=4), _RESOURCE_WORDS, st.sampled_from(["", "x", "-1g.10gb", "/i915", "s"]))
def test_registry_answers_as_the_accelerator_list_does(listed: list[str], word: str, tail: str) -> None:
    """The registry's split of its list into names and prefixes answers as the list reads, entry by entry."""
    name = word + tail
    expected = _listed(name, listed)
    assert AcceleratorRegistry(tuple(listed)).is_accelerator(name) == expected
    assert AcceleratorRegistry.of(listed).is_accelerator(name) == expected
    assert is_accelerator(name, listed) == expected
    assert AcceleratorRegistry.of(None).is_accelerator(name) == _listed(name, DEFAULT_ACCELERATOR_RESOURCES)
    assert is_accelerator(name) == _listed(name, DEFAULT_ACCELERATOR_RESOURCES)


def _listed(name: str, entries: Sequence[str]) -> bool:
    """The list's definition: an exact entry, under an entry ending in '-' or '/', or one of HAMi's shares."""
    return name in HAMI_RESOURCES or any(
        name == entry or (entry.endswith(("-", "/")) and name.startswith(entry)) for entry in entries
    )


def test_registry_of_the_default_list_is_the_default_registry() -> None:
    assert AcceleratorRegistry.of(list(DEFAULT_ACCELERATOR_RESOURCES)) is DEFAULT_REGISTRY
    assert AcceleratorRegistry.of(("example.com/fpga",)) == AcceleratorRegistry(("example.com/fpga",))


def test_make_pod_puts_init_containers_first_in_their_order() -> None:
    made = [
        podmodel.make_container("a"),
        podmodel.make_container("i1", podmodel.KIND_INIT),
        podmodel.make_container("b"),
        podmodel.make_container("s", podmodel.KIND_SIDECAR),
    ]
    assert [c.name for c in podmodel.make_pod(made).containers] == ["i1", "s", "a", "b"]
    assert [c.name for c in podmodel.make_pod(iter(made[::2])).containers] == ["a", "b"]


def test_make_container_keeps_callers_dicts_unchanged() -> None:
    requests: dict[str, Decimal] = {}
    limits = {"cpu": Decimal(2)}
    container = podmodel.make_container("c", requests=requests, limits=limits)
    assert container.requests == {"cpu": Decimal(2)} and requests == {}
    assert container.limits is not limits


def _names(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> list[str]:
    pod = podmodel.read_pod_spec(spec, annotations)
    return [c.name for c in podmodel.gpu_containers(pod)]


def test_gpu_containers() -> None:
    gpu = {"limits": {"nvidia.com/gpu": "1"}}
    sidecar = {"name": "proxy", "restartPolicy": "Always", "resources": gpu}
    apps = [{"name": "main"}, {"name": "trainer", "resources": gpu}]
    # containers requesting an accelerator; a sidecar is never one by itself
    assert _names({"initContainers": [sidecar], "containers": apps}) == ["trainer"]
    # KAI's gpu-fraction-container-name names the container, whatever its kind
    assert _names(
        {"initContainers": [sidecar], "containers": apps},
        {"gpu-fraction": "0.5", "gpu-fraction-container-name": "proxy"},
    ) == ["proxy"]
    # a KAI fraction without a name: the first app container (KAI's default)
    assert _names({"containers": [{"name": "a"}, {"name": "b"}]}, {"gpu-fraction": "0.5"}) == ["a"]
    # DRA: the containers holding a claim
    claim = {"claims": [{"name": "gpu"}]}
    assert _names(
        {"resourceClaims": [{"name": "gpu"}], "containers": [{"name": "a"}, {"name": "b", "resources": claim}]}
    ) == ["b"]
    # no accelerator at all: none
    assert _names({"containers": [{"name": "a"}]}) == []


@given(st.lists(st.booleans(), max_size=8))
def test_model_order_is_init_containers_first_each_group_in_its_order(is_app: list[bool]) -> None:
    assert list(podmodel.model_order(is_app)) == sorted(range(len(is_app)), key=lambda i: is_app[i])


@pytest.mark.parametrize(
    ("qos", "cpu", "pod_level", "pinned"),
    [
        # kubernetes v1.35 policy_static_test.go (guaranteedCPUs): whole CPUs of a Guaranteed pod only
        (podmodel.GUARANTEED, "2", False, 2),
        (podmodel.GUARANTEED, "1500m", False, 0),
        (podmodel.GUARANTEED, "0", False, 0),
        (podmodel.BURSTABLE, "4", False, 0),
        (podmodel.BEST_EFFORT, "4", False, 0),
        # Allocate skips a pod whose pod-level resources are set (PodLevelResources)
        (podmodel.GUARANTEED, "4", True, 0),
    ],
)
def test_exclusive_cpus(qos: str, cpu: str, pod_level: bool, pinned: int) -> None:
    value = parse_quantity(cpu).value
    assert podmodel.exclusive_cpus(qos, value, pod_level) == pinned
    assert podmodel.exclusive_cpus_of_millis(qos, parse_quantity(cpu).millis, pod_level) == pinned


@given(st.sampled_from([podmodel.GUARANTEED, podmodel.BURSTABLE]), st.integers(0, 200_000))
def test_the_kubelet_model_pins_what_the_pod_model_says(qos: str, millis: int) -> None:
    """The static CPU manager of the kubelet model asks the pod model, for every CPU request."""
    from kubegpu.kubelet.cpumanager.policy_static import StaticPolicy
    from kubegpu.kubelet.pod import ContainerRequest

    container = ContainerRequest("c", requests={"cpu": millis})
    assert StaticPolicy.guaranteed_cpus(object.__new__(StaticPolicy), qos, container) == (
        podmodel.exclusive_cpus_of_millis(qos, millis)
    )
