"""The cold-start prediction of a whole manifest: one per GPU container of the pods lint and admit see.

`kubegpu coldstart` calls it; where image sizes come from (layouts, options, registries) is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from kubegpu.errors import InputError
from kubegpu.manifests import Document
from kubegpu.manifests.gpu_containers import gpu_containers
from kubegpu.manifests.resources import DEFAULT_ACCELERATOR_RESOURCES
from kubegpu.serving.coldstart import ImageFacts, ModelSize, Prediction, Rates, model_size_of, pod_images, predict
from kubegpu.serving.servers import recognise
from kubegpu.workloads import pod_templates
from kubegpu.workloads.expand import expand_input
from kubegpu.workloads.partial import PartialObject, partial_object

# A pod's images -> what is known of them; problems are appended to the list given.
ImageFactsOf = Callable[[list[str], list[str]], dict[str, ImageFacts]]


def manifest_predictions(
    documents: Iterable[Document],
    file: str,
    facts_of: ImageFactsOf,
    given_model: ModelSize | None,
    rates: Rates,
    on_fragment: Callable[[PartialObject], None],
) -> list[tuple[str, Prediction]]:
    """One prediction per GPU container of `documents`' pods, with its object (`Kind/name`); a patch fragment is
    skipped (as lint skips it) and passed to `on_fragment`. Raises InputError naming `file` when there is none."""
    results: list[tuple[str, Prediction]] = []
    notes: list[str] = []
    for document in expand_input(documents):  # the pods lint and admit see
        fragment = partial_object(document)
        if fragment is not None:  # a patch fragment: its images are the patched object's
            on_fragment(fragment)
            continue
        for template in pod_templates(document):
            facts = facts_of(pod_images(template), notes)
            for container, _ in gpu_containers(template, DEFAULT_ACCELERATOR_RESOURCES):
                server = recognise(template, container)
                model = given_model or model_size_of(server)
                prediction = predict(template, container, server, facts, model, rates)
                if notes:
                    prediction = replace(prediction, notes=(*prediction.notes, *notes))
                    notes = []
                results.append((f"{document.kind}/{document.ref.name}", prediction))
    if not results:
        raise InputError("no GPU container in this manifest", file=file)
    return results
