"""Required node affinity in fit checks: operator semantics, terms ORed, GPU models for FGD."""

from __future__ import annotations

import pytest

from kubegpu.live.fit import NodeFree, admits, copies
from kubegpu.live.model import NodeInfo, PodShape, SelectorRequirement, affinity_matches

LABELS = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"}
PRODUCT = "nvidia.com/gpu.product"


@pytest.mark.parametrize(
    "req, expected",
    [
        (SelectorRequirement(PRODUCT, "In", ("NVIDIA-H100-80GB-HBM3", "NVIDIA-A100")), True),
        (SelectorRequirement(PRODUCT, "In", ("NVIDIA-L4",)), False),
        (SelectorRequirement(PRODUCT, "NotIn", ("NVIDIA-L4",)), True),
        (SelectorRequirement("missing", "NotIn", ("x",)), True),  # an absent label is "not in"
        (SelectorRequirement(PRODUCT, "Exists"), True),
        (SelectorRequirement("missing", "Exists"), False),
        (SelectorRequirement("missing", "DoesNotExist"), True),
        (SelectorRequirement("nvidia.com/gpu.count", "Gt", ("4",)), True),
        (SelectorRequirement("nvidia.com/gpu.count", "Lt", ("4",)), False),
        (SelectorRequirement(PRODUCT, "Gt", ("4",)), False),  # not an integer: no match
        (SelectorRequirement("metadata.name", "In", ("gpu-1",), field=True), True),
        (SelectorRequirement("metadata.name", "NotIn", ("gpu-1",), field=True), False),
        (SelectorRequirement(PRODUCT, "Bogus", ("x",)), False),
    ],
)
def test_requirement_operators(req: SelectorRequirement, expected: bool) -> None:
    assert req.matches(LABELS, "gpu-1") is expected


def test_terms_are_ored_and_an_empty_term_matches_nothing() -> None:
    no = (SelectorRequirement(PRODUCT, "In", ("NVIDIA-L4",)),)
    yes = (SelectorRequirement(PRODUCT, "Exists"),)
    assert affinity_matches((), LABELS, "n")
    assert affinity_matches((no, yes), LABELS, "n")
    assert not affinity_matches((no,), LABELS, "n")
    assert not affinity_matches(((),), LABELS, "n")


def test_affinity_limits_where_a_shape_fits() -> None:
    node = NodeInfo("gpu-1", {"nvidia.com/gpu": 8, "cpu": 64_000}, {}, labels=LABELS)
    free = NodeFree(node, {"nvidia.com/gpu": 4, "cpu": 64_000})
    l4_only = PodShape("nvidia.com/gpu", 1, node_affinity=((SelectorRequirement(PRODUCT, "In", ("NVIDIA-L4",)),),))
    not_l4 = PodShape("nvidia.com/gpu", 2, node_affinity=((SelectorRequirement(PRODUCT, "NotIn", ("NVIDIA-L4",)),),))
    assert not admits(node, l4_only) and copies(free, l4_only) == 0
    assert admits(node, not_l4) and copies(free, not_l4) == 2


def test_gpu_models_from_selector_or_affinity() -> None:
    assert PodShape("nvidia.com/gpu", 1, node_selector=((PRODUCT, "A"),)).gpu_models(PRODUCT) == ("A",)
    two_terms = PodShape(
        "nvidia.com/gpu",
        1,
        node_affinity=(
            (SelectorRequirement(PRODUCT, "In", ("A", "B")),),
            (SelectorRequirement(PRODUCT, "In", ("C",)),),
        ),
    )
    assert two_terms.gpu_models(PRODUCT) == ("A", "B", "C")
    # one term without a model constraint: any model can be chosen
    open_term = PodShape(
        "nvidia.com/gpu",
        1,
        node_affinity=((SelectorRequirement(PRODUCT, "In", ("A",)),), (SelectorRequirement("zone", "Exists"),)),
    )
    assert open_term.gpu_models(PRODUCT) == ()
