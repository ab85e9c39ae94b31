"""The real corpus (../shared/corpus/real): every file reads, every pod template is found, and the
findings agree with the expert's `V:` (violations) and `OK:` notes of INDEX.tsv.

Where kubegpu and a note disagree, DISAGREEMENTS below says which file, which tag and why.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubegpu.lint import LintConfig, all_rules, lint_text
from kubegpu.manifests import load_text, uses_accelerators
from kubegpu.manifests.placeholders import DEPENDS_ON
from kubegpu.workloads import pod_templates
from tests.paths import SHARED_DIR

CORPUS = SHARED_DIR / "corpus" / "real"
WORKLOAD_KINDS = {
    "Pod",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Job",
    "CronJob",
    "JobSet",
    "LeaderWorkerSet",
    "PyTorchJob",
    "TFJob",
    "MPIJob",
    "XGBoostJob",
    "MXJob",
    "PaddleJob",
    "TrainJob",
    "RayJob",
    "RayCluster",
    "RayService",
    "InferenceService",
    "LLMInferenceService",
    "AppWrapper",
    "VLLMRuntime",
    "NIMService",
    "NIMCache",
    "DynamoGraphDeployment",
    "HyperPodPyTorchJob",
}
# Expert tag -> the rule that must fire (V:) or must stay silent (OK:).
VIOLATION_RULES = {
    "qos-besteffort": "gpu-pod-not-guaranteed",
    "qos-burstable": "gpu-pod-not-guaranteed",
    "no-cpu-request": "gpu-pod-not-guaranteed",
    "cpu-fractional": "gpu-cpu-not-integer",
    "no-dshm": "dshm-missing",
    "dshm-hostpath": "dshm-host-shared",
    "pull-always": "image-pull-always",
    "latest-tag": "image-tag-mutable",
    "mutable-tag": "image-tag-mutable",
    "devel-runtime": "image-devel-runtime",
    "no-gang": "gang-missing",
    "no-topology": "topology-missing",
    "no-model-cache": "model-cache-missing",
    "scale-to-zero": "inference-scale-to-zero",
}
OK_RULES = {
    "guaranteed": ("gpu-pod-not-guaranteed",),
    "integer-cpu": ("gpu-cpu-not-integer",),
    "dshm": ("dshm-missing",),
    "pinned-image": ("image-tag-mutable",),
    "gang": ("gang-missing",),
    "topology": ("topology-missing",),
    "model-cache": ("model-cache-missing",),
    "warm": ("inference-scale-to-zero",),
}
# (file name fragment, tag) -> why kubegpu and the note differ. Kubernetes semantics decide.
DISAGREEMENTS: dict[tuple[str, str], str] = {
    (
        "production-stack_v1alph",
        "pinned-image",
    ): "the note's pinned-image is the vLLM container's dated tag; the finding is the sidecar's :latest, which the "
    "same note lists as latest-tag",
    (
        "llm-serving-gemma__vllm__vllm-7b-kvcache__patch",
        "no-dshm",
    ): "the file is a kustomize patch fragment without an image, which the API server would reject as a whole "
    "object: it is counted as partial and not linted; its base (vllm-7b.yaml) mounts a memory-backed /dev/shm",
    **{
        ("autoscaling__autoscale_gpu", tag): "a tensorflow: predictor gets KServe's default resources (cpu 1 and "
        "memory 2Gi, requests and limits, from inferenceservice-config) where it sets none, so the GPU-only "
        "predictor is Guaranteed (kserve pkg/apis/serving/v1beta1/inference_service_defaults.go)"
        for tag in ("qos-besteffort", "no-cpu-request")
    },
    **{
        (fragment, "no-dshm"): "the service is read merged with its LLMInferenceServiceConfig presets as KServe merges "
        "them (the well-known preset for its shape, then baseRefs; kserve pkg/controller/v1alpha1/llmisvc "
        "config_merge.go), and the presets KServe ships mount a memory-backed /dev/shm: the note reads the file alone"
        for fragment in ("llmisvc__dp-ep__deepseek-r1-gpu-rdma-roce", "llmisvc__single-node-gpu__llm-inference-servi")
    },
    (
        "mx_job_dist_gpu_v1",
        "no-gang",
    ): "one pod of the job requests a GPU (the note says so too); gang scheduling keeps accelerators from waiting "
    "on a partly placed job, and with one accelerator pod there is none to keep waiting, as in KubeRay's one-TPU "
    "RayJob sample: KG501 needs two accelerator pods",
}
REQUIRED_RULE_NAMES = {
    "gpu-pod-not-guaranteed",
    "gpu-cpu-not-integer",
    "gpu-cpu-not-smt-multiple",
    "gpu-request-limit-mismatch",
    "dshm-missing",
    "dshm-unsized",
    "dshm-host-shared",
    "image-pull-always",
    "image-tag-mutable",
    "image-devel-runtime",
    "dockerfile-devel-final-stage",
    "model-cache-missing",
    "model-cache-writable-shared",
    "inference-scale-to-zero",
    "gang-missing",
    "gang-partial",
    "topology-missing",
    "scheduler-spreads-gpus",
    "binpack-profile-unused",
    "kubelet-cpu-manager-not-static",
    "kubelet-full-pcpus-missing",
    "kubelet-topology-policy-weak",
    "kubelet-reserved-memory-mismatch",
    "kubelet-reserved-cpus-conflict",
}


def _rows() -> list[dict[str, str]]:
    index = CORPUS / "INDEX.tsv"
    if not index.is_file():
        return []
    with index.open() as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


ROWS = _rows()
needs_corpus = pytest.mark.skipif(not ROWS, reason=f"{CORPUS} is absent (shared data sits beside the checkout)")


def _tags(notes: str, prefix: str) -> Iterator[str]:
    for part in notes.split("|"):
        part = part.strip()
        if part.startswith(prefix):
            for item in part[len(prefix) :].split(";"):
                tag = re.split(r"[\s(]", item.strip(), maxsplit=1)[0]
                if tag:
                    yield tag


def test_catalogue_has_every_required_rule() -> None:
    missing = REQUIRED_RULE_NAMES - {rule.name for rule in all_rules()}
    assert not missing, f"rules not yet in the registry: {sorted(missing)}"


@needs_corpus
@pytest.mark.parametrize("row", ROWS, ids=[r["local_file"].split("/")[-1][:60] for r in ROWS])
def test_file_reads_and_templates_are_found(row: dict[str, str]) -> None:
    path = CORPUS / row["local_file"]
    result = load_text(str(path), path.read_text())
    assert not [p for p in result.problems if p.fatal], result.problems
    kinds = {doc.kind for doc in result.documents}
    assert set(row["kinds"].split(",")) <= kinds | {""}
    templates = [t for doc in result.documents for t in pod_templates(doc)]
    for kind in kinds & WORKLOAD_KINDS:
        assert any(t.kind == kind or t.document.prefix for t in templates), f"no pod template found in {kind}"
    for template in templates:
        assert template.containers, f"{template.description}: no containers found"
    gpu = [t for t in templates if uses_accelerators(t)]
    if row["gpu"] == "no":
        assert not gpu, "a CPU-only file was taken for a GPU workload"


@needs_corpus
@pytest.mark.parametrize("row", ROWS, ids=[r["local_file"].split("/")[-1][:60] for r in ROWS])
def test_findings_agree_with_the_notes(row: dict[str, str]) -> None:
    path = CORPUS / row["local_file"]
    registered = {rule.name for rule in all_rules()}
    # Info-level findings that hedge on a placeholder's rendered value are not claims.
    fired = {
        f.name
        for f in lint_text(str(path), path.read_text(), LintConfig()).findings
        if not (f.severity.value == "info" and DEPENDS_ON in f.message)
    }
    problems = []
    for tag in _tags(row["notes"], "V:"):
        rule = VIOLATION_RULES.get(tag)
        if rule is None or rule not in registered or _excused(path, tag):
            continue
        if rule not in fired:
            problems.append(f"note says {tag}, but {rule} did not fire")
    for tag in _tags(row["notes"], "OK:"):
        for rule in OK_RULES.get(tag, ()):
            if rule in registered and rule in fired and not _excused(path, tag):
                problems.append(f"note says OK {tag}, but {rule} fired")
    assert not problems, problems


def _excused(path: Path, tag: str) -> bool:
    return any(fragment in path.name and tag == excused for fragment, excused in DISAGREEMENTS)


@needs_corpus
@pytest.mark.parametrize("row", ROWS, ids=[r["local_file"].split("/")[-1][:60] for r in ROWS])
def test_loaded_data_equals_pyyaml(row: dict[str, str]) -> None:
    """Our loader builds the same objects as PyYAML's safe constructor (dates stay strings, as kubectl)."""
    import yaml

    def without_dates(value: object) -> object:
        if isinstance(value, dict):
            return {k: without_dates(v) for k, v in value.items()}
        if isinstance(value, list):
            return [without_dates(v) for v in value]
        return str(value) if type(value).__name__ in ("date", "datetime") else value

    path = CORPUS / row["local_file"]
    text = path.read_text()
    ours = [d.data for d in load_text(str(path), text).documents if not d.prefix]
    theirs = [
        without_dates(d)
        for d in yaml.load_all(text, Loader=yaml.CSafeLoader)
        if isinstance(d, dict) and d.get("kind") and d.get("apiVersion") and not str(d.get("kind")).endswith("List")
    ]
    assert ours == theirs
