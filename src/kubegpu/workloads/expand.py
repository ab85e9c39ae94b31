"""The objects of an input as the cluster would see them: what every command that reads pods calls first.

An Argo workflow's resource steps create objects written as text in it (manifests.embedded); a Kubeflow Trainer
TrainJob's pods are its (Cluster)TrainingRuntime's trainer job with the TrainJob's settings (workloads.trainjob),
and a KServe `model:` predictor's container is completed by its (Cluster)ServingRuntime (workloads.kserve), when
that runtime is in the same input: each kind's adapter binds it (`bind`) and names the runtimes bound to it.
`lint`, `admit`, `gen` and the Python API read pods only after this step, so no two commands disagree on which pods
a file holds, nor on their requests and QoS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubegpu.manifests.document import Document
from kubegpu.manifests.embedded import embedded_objects
from kubegpu.workloads.kind import DocumentsOf
from kubegpu.workloads.partial import partial_object
from kubegpu.workloads.registry import kind_of


def with_embedded(documents: Iterable[Document]) -> tuple[Document, ...]:
    """Each document followed by the objects written as text in it (an Argo resource step's manifest)."""
    return tuple(d for doc in documents for d in (doc, *embedded_objects(doc)))


def bind_runtimes(documents: Iterable[Document], documents_of: DocumentsOf) -> None:
    """Bind every TrainJob among `documents` to its runtime when `documents_of(kind)` holds it (from then on its
    pod templates are the runtime's trainer pods with the TrainJob's settings), and every KServe `model:`
    predictor to its ServingRuntime or ClusterServingRuntime (its container's resources and /dev/shm are the
    runtime's for what it leaves out)."""
    for doc in documents:
        adapter = kind_of(doc)
        if adapter is not None:
            adapter.bind(doc, documents_of)


def runtime_users(documents: Iterable[Document]) -> dict[int, Document]:
    """The runtimes bound to objects among `documents` (after `bind_runtimes`), each with the first object that
    uses it, keyed by the runtime document's id. A bound runtime makes no pods of its own: its pods are the ones
    of the TrainJobs and InferenceServices that use it, which is how `admit` and `simulate` count them."""
    users: dict[int, Document] = {}
    for doc in documents:
        adapter = kind_of(doc)
        for runtime in adapter.runtimes(doc) if adapter is not None else ():
            users.setdefault(id(runtime), doc)
    return users


def makes_no_pods(doc: Document, users: Mapping[int, Document]) -> str | None:
    """Why `doc` makes no pods of its own, as one notice line ("FILE:LINE: Kind/name: why"), or None when it does.

    A runtime that an object of the input uses (`users`, from `runtime_users`) makes none: its pods are that
    object's. A partial object (a patch fragment) is no object the API server would create. Lint checks such a
    runtime (the object a person edits) and counts a fragment as partial; `admit` and the Python API read this."""
    user = users.get(id(doc))
    if user is not None:
        where = doc.location(())
        return (
            f"{where.file}:{where.line}: {doc.kind}/{doc.ref.name}: a runtime, admitted as the pods of "
            f"{user.kind}/{user.ref.name} that uses it"
        )
    fragment = partial_object(doc)
    if fragment is not None:
        at = f"{fragment.file}:{fragment.line}: {fragment.what}"
        return f"{at}: a patch fragment, not checked (admit the object it patches)"
    return None


def by_kind(documents: Iterable[Document]) -> DocumentsOf:
    """A `documents_of` lookup over `documents`."""
    index: dict[str, list[Document]] = {}
    for doc in documents:
        index.setdefault(doc.kind, []).append(doc)
    return lambda kind: index.get(kind, ())


def expand_input(documents: Iterable[Document]) -> tuple[Document, ...]:
    """Every object of one input, embedded ones included, with TrainJobs bound to the runtimes it holds."""
    objects = with_embedded(documents)
    bind_runtimes(objects, by_kind(objects))
    return objects
