"""startup-probe-too-short (KG404): the case table, and the cold-start model's pieces."""

from __future__ import annotations

from typing import Any

import pytest

from kubegpu.manifests import ContainerRef
from kubegpu.serving.coldstart import (
    KNOWN_MODELS,
    ImageFacts,
    ModelSize,
    Rates,
    has_probe_budget,
    known_model,
    lazy_from_manifest,
    probe_budget,
    suggest_probe,
)
from tests.rules.kg_cases import case_ids, load_table, run_case

TABLE = load_table("coldstart.yaml")


@pytest.mark.parametrize("case", TABLE["cases"], ids=case_ids(TABLE))
def test_case(case: dict[str, Any]) -> None:
    run_case(TABLE, case)


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", 16_060_522_496),
        ("hf://meta-llama/Llama-3.1-70B-Instruct@main", 141_107_412_992),
        ("/models/Qwen/Qwen2.5-7B-Instruct/", 15_231_233_024),
        ("acme/unknown", None),
        (None, None),
    ],
)
def test_known_models(reference: str | None, expected: int | None) -> None:
    found = known_model(reference)
    assert (found[1].bytes if found else None) == expected


def test_known_model_sizes_are_whole_bf16_tensors() -> None:
    assert all(entry.bytes % 2 == 0 and entry.bytes > 1e9 and entry.source for entry in KNOWN_MODELS.values())
    assert all(key == key.lower() and key.count("/") == 1 for key in KNOWN_MODELS)


def _container(data: dict[str, Any]) -> ContainerRef:
    return ContainerRef(("spec", "containers", 0), data, "container")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, None),
        ({"readinessProbe": {"httpGet": {"port": 1}}}, None),
        ({"livenessProbe": {"httpGet": {"port": 1}}}, ("livenessProbe", 30)),  # defaults 0 + 3 × 10
        (
            {
                "startupProbe": {"failureThreshold": 60, "periodSeconds": 5, "initialDelaySeconds": 7},
                "livenessProbe": {},
            },
            ("startupProbe", 307),
        ),
        ({"startupProbe": {"failureThreshold": "oops"}}, ("startupProbe", 30)),
    ],
)
def test_probe_budget(data: dict[str, Any], expected: tuple[str, int] | None) -> None:
    budget = probe_budget(_container(data))
    assert (None if budget is None else (budget.kind, budget.seconds)) == expected
    assert has_probe_budget(_container(data)) is (expected is not None)  # the rule's cheap test agrees


@pytest.mark.parametrize("probe", [None, "x", [], {}, {"exec": {"command": ["true"]}}])
@pytest.mark.parametrize("kind", ["startupProbe", "livenessProbe", "readinessProbe"])
def test_has_probe_budget_is_probe_budget_not_none(kind: str, probe: Any) -> None:
    container = _container({kind: probe})
    assert has_probe_budget(container) is (probe_budget(container) is not None)


def test_suggestion_keeps_the_startup_probe_period_and_covers_the_margin() -> None:
    budget = probe_budget(_container({"startupProbe": {"periodSeconds": 5, "initialDelaySeconds": 20}}))
    suggestion = suggest_probe(100.0, budget)
    assert suggestion == {"initialDelaySeconds": 20, "periodSeconds": 5, "failureThreshold": 26}
    assert suggest_probe(1.0, None)["failureThreshold"] == 3  # never below the default


@pytest.mark.parametrize(
    ("manifest", "kind"),
    [
        ({"layers": [{"annotations": {"containerd.io/snapshot/stargz/toc.digest": "sha256:aa"}}]}, "eStargz"),
        ({"annotations": {"com.amazon.soci.index-digest": "sha256:bb"}, "layers": []}, "SOCI"),
        ({"manifests": [{"annotations": {"com.amazon.soci.index-digest": "sha256:bb"}}]}, "SOCI"),
        ({"layers": [{"annotations": {"containerd.io/snapshot/nydus-bootstrap": "true"}}]}, "Nydus"),
        ({"layers": [{"annotations": {"org.opencontainers.image.title": "x"}}]}, None),
    ],
)
def test_lazy_annotations(manifest: dict[str, Any], kind: str | None) -> None:
    assert lazy_from_manifest(manifest) == kind


def test_defaults_are_stated() -> None:
    rates = Rates()
    assert rates.load_gbps == 0.31 and "Run:ai" in rates.load_source
    assert ImageFacts(None).source == "unknown" and ModelSize(1, "x").bytes == 1
