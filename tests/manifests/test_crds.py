"""Operators' custom resources map to the pods their operators create; any other kind is searched generically."""

from __future__ import annotations

import pytest

from kubegpu.lint import LintConfig, lint_text
from kubegpu.manifests import load_text, pod_spec, uses_accelerators
from kubegpu.workloads import Coverage, coverage, pod_templates

VLLM_RUNTIME = """\
apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata: {name: llama}
spec:
  model: {modelURL: meta-llama/Llama-3.1-8B-Instruct}
  vllmConfig: {port: 8000}
  deploymentConfig:
    replicas: 3
    resources: {cpu: "8", memory: 64Gi, gpu: "2"}
    image: {registry: docker.io, name: "vllm/vllm-openai:v0.9.1", pullPolicy: IfNotPresent}
    sidecarConfig:
      enabled: true
      image: {registry: docker.io, name: "lmcache/lmstack-sidecar:latest"}
"""

NIM_SERVICE = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: llama3}
spec:
  image: {repository: nvcr.io/nim/meta/llama-3.1-8b-instruct, tag: "1.8", pullPolicy: Always}
  authSecret: ngc-api-secret
  storage: {nimCache: {name: llama3-cache}}
  replicas: 2
  resources:
    limits: {nvidia.com/gpu: 1}
"""

NIM_CACHE = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMCache
metadata: {name: llama3-cache}
spec:
  source:
    ngc: {authSecret: ngc-api-secret, modelPuller: "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8"}
  storage: {pvc: {create: true, size: 50Gi, volumeAccessMode: ReadWriteMany}}
  resources: {cpu: "4", memory: 16Gi, gpus: 1}
"""

DYNAMO = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: disagg}
spec:
  services:
    Frontend:
      replicas: 1
      extraPodSpec:
        mainContainer: {image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0"}
    VllmDecodeWorker:
      replicas: 2
      multinode: {nodeCount: 2}
      resources:
        requests: {cpu: "10", memory: 40Gi, gpu: "8"}
        limits: {cpu: "10", memory: 40Gi, gpu: "8"}
      extraPodSpec:
        mainContainer: {image: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0"}
"""

HYPERPOD = """\
apiVersion: sagemaker.amazonaws.com/v1
kind: HyperPodPyTorchJob
metadata: {name: fsdp}
spec:
  nprocPerNode: "8"
  replicaSpecs:
    - name: pods
      replicas: 4
      template:
        spec:
          containers:
            - name: pytorch
              image: 123.dkr.ecr.us-west-2.amazonaws.com/fsdp:v1
              resources:
                limits: {nvidia.com/gpu: 8}
"""

# A kind nobody maps: its pod template sits at spec.runner.template.
UNKNOWN_KIND = """\
apiVersion: example.com/v1
kind: FineTune
metadata: {name: ft}
spec:
  runner:
    replicas: 2
    template:
      metadata: {labels: {app: ft}}
      spec:
        containers:
          - name: trainer
            image: example.com/trainer:1.0
            resources:
              limits: {nvidia.com/gpu: 1}
"""

NO_PODS = """\
apiVersion: example.com/v1
kind: Dashboard
metadata: {name: d}
spec: {title: GPUs, panels: [{name: util}]}
"""


def _templates(text: str):  # type: ignore[no-untyped-def]
    [doc] = load_text("x.yaml", text).documents
    return doc, list(pod_templates(doc))


def test_vllm_runtime_rebuilds_the_operators_deployment() -> None:
    doc, [template] = _templates(VLLM_RUNTIME)
    assert coverage(doc) is Coverage.KNOWN
    assert template.replicas == 3
    main, sidecar = template.containers
    assert main.data["image"] == "docker.io/vllm/vllm-openai:v0.9.1"
    assert main.data["resources"]["limits"] == {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2"}
    assert main.data["resources"]["requests"] == main.data["resources"]["limits"]
    assert sidecar.data["imagePullPolicy"] == "IfNotPresent"
    assert sidecar.data["resources"]["limits"] == {"cpu": "0.5", "memory": "128Mi", "nvidia.com/gpu": "0"}
    assert uses_accelerators(template)


def test_nim_service_has_the_operators_dshm_and_model_store() -> None:
    _doc, [template] = _templates(NIM_SERVICE)
    assert template.replicas == 2
    [container] = template.containers
    assert container.data["image"] == "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8"
    names = {v["name"]: v for v in template.volumes}
    assert names["dshm"]["emptyDir"] == {"medium": "Memory"}
    assert names["model-store"]["persistentVolumeClaim"]["claimName"] == "llama3-cache"


def test_nim_cache_job_gets_requests_equal_limits() -> None:
    _doc, [template] = _templates(NIM_CACHE)
    [container] = template.containers
    assert container.data["resources"]["requests"] == {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": 1}
    assert container.data["image"] == "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8"


def test_dynamo_services_count_replicas_times_nodes() -> None:
    _doc, templates = _templates(DYNAMO)
    by_role = {t.role: t for t in templates}
    assert by_role["Frontend"].replicas == 1 and by_role["VllmDecodeWorker"].replicas == 4
    assert not uses_accelerators(by_role["Frontend"]) and uses_accelerators(by_role["VllmDecodeWorker"])
    shm = [v for v in by_role["VllmDecodeWorker"].volumes if v["name"] == "shared-memory"]
    assert shm == [{"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]


def test_hyperpod_replica_specs() -> None:
    _doc, [template] = _templates(HYPERPOD)
    assert (template.role, template.replicas, template.path) == (
        "pods",
        4,
        ("spec", "replicaSpecs", 0, "template", "spec"),
    )


def test_unknown_kind_is_read_generically_and_says_so() -> None:
    doc, [template] = _templates(UNKNOWN_KIND)
    assert coverage(doc) is Coverage.GENERIC
    assert (template.replicas, template.path) == (2, ("spec", "runner", "template", "spec"))
    assert template.labels == {"app": "ft"}
    findings = lint_text("x.yaml", UNKNOWN_KIND, LintConfig(select=("KG101",))).findings
    assert findings and all("FineTune has no known mapping" in f.message for f in findings)
    assert all("spec.runner.template.spec" in f.message for f in findings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (NO_PODS, Coverage.NOT_CHECKED),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n", Coverage.NO_PODS),
        ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: q}\nspec: {}\n", Coverage.NO_PODS),
        ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n", Coverage.KNOWN),
    ],
)
def test_coverage_classes(text: str, expected: Coverage) -> None:
    [doc] = load_text("x.yaml", text).documents
    assert coverage(doc) is expected


# Firing and non-firing cases for the mapped kinds, with the rules that read them.
CASES = [
    ("vllm-runtime-sidecar-latest", VLLM_RUNTIME, "KG302", 1),
    ("vllm-runtime-main-is-guaranteed", VLLM_RUNTIME, "KG101", 0),
    ("vllm-runtime-no-dshm", VLLM_RUNTIME, "KG201", 1),
    ("nim-service-pull-always", NIM_SERVICE, "KG301", 1),
    ("nim-service-has-dshm", NIM_SERVICE, "KG201", 0),
    ("nim-service-not-guaranteed", NIM_SERVICE, "KG101", 1),
    ("nim-cache-guaranteed", NIM_CACHE, "KG101", 0),
    ("dynamo-has-dshm", DYNAMO, "KG201", 0),
    ("dynamo-multinode-no-topology-rule-crash", DYNAMO, "KG104", 0),
    ("vllm-runtime-downloads-from-the-hub", VLLM_RUNTIME, "KG401", 1),
    (
        "vllm-runtime-scales-to-zero",
        VLLM_RUNTIME.replace(
            "  vllmConfig: {port: 8000}\n",
            "  vllmConfig: {port: 8000}\n  autoscalingConfig: {enabled: true, minReplicas: 0, maxReplicas: 4}\n",
        ),
        "KG403",
        1,
    ),
    ("vllm-runtime-keeps-a-warm-replica", VLLM_RUNTIME, "KG403", 0),
    (
        "nim-service-multi-node-needs-a-gang",
        NIM_SERVICE.replace("  replicas: 2\n", "  replicas: 1\n  multiNode: {parallelism: {pipeline: 2, tensor: 8}}\n"),
        "KG501",
        1,
    ),
    ("nim-service-single-node-needs-no-gang", NIM_SERVICE, "KG501", 0),
    ("hyperpod-four-nodes-need-a-gang", HYPERPOD, "KG501", 1),
    ("hyperpod-not-guaranteed", HYPERPOD, "KG101", 1),
    ("hyperpod-no-dshm", HYPERPOD, "KG201", 1),
    ("generic-no-dshm", UNKNOWN_KIND, "KG201", 1),
    ("no-pods-nothing", NO_PODS, "KG101", 0),
]


@pytest.mark.parametrize(("name", "text", "code", "count"), CASES, ids=[c[0] for c in CASES])
def test_rules_on_custom_resources(name: str, text: str, code: str, count: int) -> None:
    findings = lint_text(f"{name}.yaml", text, LintConfig(select=(code,))).findings
    assert len(findings) == count, [f.message for f in findings]


def test_synthesised_pods_take_no_fix() -> None:
    findings = lint_text("x.yaml", NIM_SERVICE, LintConfig(select=("KG101", "KG301"))).findings
    assert findings and all(f.fix is None for f in findings)


def test_pod_spec_of_kserve_model_has_the_model_container() -> None:
    text = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: m}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      resources:
        limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
        requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
"""
    [doc] = load_text("x.yaml", text).documents
    [template] = pod_templates(doc)
    spec = pod_spec(template)
    assert [c["resources"]["limits"]["nvidia.com/gpu"] for c in spec["containers"]] == [1]
