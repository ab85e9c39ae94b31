"""Pod templates are found in every workload kind, with their path, role and replica count."""

from __future__ import annotations

import pytest

from kubegpu.manifests import container_resources, format_path, load_text, uses_accelerators
from kubegpu.workloads import pod_templates

C = "containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]"

CASES: list[tuple[str, str, list[tuple[str, str, int | None]]]] = [
    ("Pod", f"apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\nspec: {{{C}}}", [("spec", "", 1)]),
    (
        "Deployment",
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: x}}\nspec:\n  replicas: 3\n"
        f"  template: {{spec: {{{C}}}}}",
        [("spec.template.spec", "", 3)],
    ),
    (
        "StatefulSet",
        f"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: x}}\nspec:\n  template: {{spec: {{{C}}}}}",
        [("spec.template.spec", "", 1)],
    ),
    (
        "DaemonSet",
        f"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: x}}\nspec:\n  template: {{spec: {{{C}}}}}",
        [("spec.template.spec", "", None)],
    ),
    (
        "ReplicaSet",
        f"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: x}}\nspec:\n  replicas: 2\n"
        f"  template: {{spec: {{{C}}}}}",
        [("spec.template.spec", "", 2)],
    ),
    (
        "ReplicationController",
        f"apiVersion: v1\nkind: ReplicationController\nmetadata: {{name: x}}\nspec:\n"
        f"  replicas: 2\n  template: {{spec: {{{C}}}}}",
        [("spec.template.spec", "", 2)],
    ),
    (
        "Job",
        f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: x}}\nspec:\n  parallelism: 4\n  completions: 8\n"
        f"  template: {{spec: {{{C}}}}}",
        [("spec.template.spec", "", 4)],
    ),
    (
        "CronJob",
        f"apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: x}}\nspec:\n  schedule: '* * * * *'\n"
        f"  jobTemplate: {{spec: {{template: {{spec: {{{C}}}}}}}}}",
        [("spec.jobTemplate.spec.template.spec", "", 1)],
    ),
    (
        "JobSet",
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: x}\nspec:\n  replicatedJobs:\n"
        f"  - name: workers\n    replicas: 2\n    template: {{spec: {{parallelism: 4, template: {{spec: {{{C}}}}}}}}}",
        [("spec.replicatedJobs[0].template.spec.template.spec", "workers", 8)],
    ),
    (
        "LeaderWorkerSet",
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: x}\n"
        "spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 4\n"
        f"    leaderTemplate: {{spec: {{{C}}}}}\n    workerTemplate: {{spec: {{{C}}}}}",
        [
            ("spec.leaderWorkerTemplate.leaderTemplate.spec", "leader", 2),
            ("spec.leaderWorkerTemplate.workerTemplate.spec", "worker", 6),
        ],
    ),
    (
        "PyTorchJob",
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: x}\nspec:\n"
        "  pytorchReplicaSpecs:\n"
        f"    Master: {{replicas: 1, template: {{spec: {{{C}}}}}}}\n"
        f"    Worker: {{replicas: 3, template: {{spec: {{{C}}}}}}}",
        [
            ("spec.pytorchReplicaSpecs.Master.template.spec", "Master", 1),
            ("spec.pytorchReplicaSpecs.Worker.template.spec", "Worker", 3),
        ],
    ),
    (
        "TFJob",
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: x}\nspec:\n  tfReplicaSpecs:\n"
        f"    Worker: {{replicas: 2, template: {{spec: {{{C}}}}}}}",
        [("spec.tfReplicaSpecs.Worker.template.spec", "Worker", 2)],
    ),
    (
        "MPIJob v2beta1",
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: x}\nspec:\n"
        "  mpiReplicaSpecs:\n"
        "    Launcher: {replicas: 1, template: {spec: {containers: [{name: l, image: i}]}}}\n"
        f"    Worker: {{replicas: 2, template: {{spec: {{{C}}}}}}}",
        [
            ("spec.mpiReplicaSpecs.Launcher.template.spec", "Launcher", 1),
            ("spec.mpiReplicaSpecs.Worker.template.spec", "Worker", 2),
        ],
    ),
    (
        "MPIJob v1",
        "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: x}\nspec:\n"
        f"  mpiReplicaSpecs:\n    Worker: {{replicas: 2, template: {{spec: {{{C}}}}}}}",
        [("spec.mpiReplicaSpecs.Worker.template.spec", "Worker", 2)],
    ),
    (
        "XGBoostJob",
        "apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nmetadata: {name: x}\nspec:\n  xgbReplicaSpecs:\n"
        f"    Worker: {{replicas: 2, template: {{spec: {{{C}}}}}}}",
        [("spec.xgbReplicaSpecs.Worker.template.spec", "Worker", 2)],
    ),
    (
        "PaddleJob",
        "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: x}\nspec:\n  paddleReplicaSpecs:\n"
        f"    Worker: {{replicas: 2, template: {{spec: {{{C}}}}}}}",
        [("spec.paddleReplicaSpecs.Worker.template.spec", "Worker", 2)],
    ),
    (
        "MXJob",
        "apiVersion: kubeflow.org/v1\nkind: MXJob\nmetadata: {name: x}\nspec:\n  mxReplicaSpecs:\n"
        f"    Worker: {{replicas: 2, template: {{spec: {{{C}}}}}}}",
        [("spec.mxReplicaSpecs.Worker.template.spec", "Worker", 2)],
    ),
    (
        "TrainJob",
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: x}\nspec:\n"
        "  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 4\n    image: i\n"
        "    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}",
        [("spec.trainer", "trainer", 4)],
    ),
    (
        "ClusterTrainingRuntime",
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
        "metadata: {name: x}\nspec:\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n"
        f"        template: {{spec: {{template: {{spec: {{{C}}}}}}}}}",
        [("spec.template.spec.replicatedJobs[0].template.spec.template.spec", "node", 1)],
    ),
    (
        "RayCluster",
        "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: x}\nspec:\n"
        f"  headGroupSpec: {{template: {{spec: {{{C}}}}}}}\n  workerGroupSpecs:\n"
        f"  - {{groupName: gpu, replicas: 3, numOfHosts: 2, template: {{spec: {{{C}}}}}}}",
        [("spec.headGroupSpec.template.spec", "head", 1), ("spec.workerGroupSpecs[0].template.spec", "gpu", 6)],
    ),
    (
        "RayJob",
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: x}\nspec:\n  rayClusterSpec:\n"
        f"    headGroupSpec: {{template: {{spec: {{{C}}}}}}}\n    workerGroupSpecs:\n"
        f"    - {{groupName: w, minReplicas: 2, template: {{spec: {{{C}}}}}}}",
        [
            ("spec.rayClusterSpec.headGroupSpec.template.spec", "head", 1),
            ("spec.rayClusterSpec.workerGroupSpecs[0].template.spec", "w", 2),
        ],
    ),
    (
        "RayService",
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: x}\nspec:\n  rayClusterConfig:\n"
        f"    headGroupSpec: {{template: {{spec: {{{C}}}}}}}",
        [("spec.rayClusterConfig.headGroupSpec.template.spec", "head", 1)],
    ),
    (
        "Volcano Job",
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: x}\nspec:\n"
        f"  minAvailable: 3\n  tasks:\n  - {{name: worker, replicas: 3, template: {{spec: {{{C}}}}}}}",
        [("spec.tasks[0].template.spec", "worker", 3)],
    ),
    (
        "InferenceService",
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: x}\n"
        "spec:\n  predictor:\n    minReplicas: 2\n    model:\n      modelFormat: {name: huggingface}\n"
        "      resources: {limits: {nvidia.com/gpu: 1}}\n  transformer:\n    containers: [{name: t, image: i}]",
        [("spec.predictor", "predictor", 2), ("spec.transformer", "transformer", 1)],
    ),
    (
        "Knative Service",
        "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: x}\nspec:\n"
        f"  template: {{spec: {{{C}}}}}",
        [("spec.template.spec", "", None)],
    ),
    (
        "Argo Workflow",
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: x}\nspec:\n"
        "  entrypoint: main\n  templates:\n  - name: main\n    container: {image: i, resources: {limits: "
        "{nvidia.com/gpu: 1}}}\n  - name: steps\n    steps: [[{name: a, template: main}]]",
        [("spec.templates[0]", "main", 1)],
    ),
    (
        "WorkflowTemplate",
        "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: x}\nspec:\n"
        "  templates:\n  - name: gpu\n    script: {image: i, source: 'print(1)'}",
        [("spec.templates[0]", "gpu", 1)],
    ),
    (
        "AppWrapper",
        "apiVersion: workload.codeflare.dev/v1beta2\nkind: AppWrapper\nmetadata: {name: x}\nspec:\n"
        "  components:\n  - template:\n      apiVersion: batch/v1\n      kind: Job\n      metadata: {name: inner}\n"
        f"      spec: {{template: {{spec: {{{C}}}}}}}",
        [("spec.template.spec", "", 1)],
    ),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_pod_templates(name: str, text: str, expected: list[tuple[str, str, int | None]]) -> None:
    result = load_text(f"{name}.yaml", text)
    assert not result.problems, result.problems
    templates = [t for doc in result.documents for t in pod_templates(doc)]
    assert [(format_path(t.path), t.role, t.replicas) for t in templates] == expected
    assert templates[-1].containers, "every template has its containers"


def test_appwrapper_paths_point_into_the_wrapper() -> None:
    text = CASES[-1][1]
    doc = load_text("aw.yaml", text).documents[0]
    template = next(pod_templates(doc))
    assert template.document.prefix == ("spec", "components", 0, "template")
    assert template.document.location(template.path).line == 10


def test_gpu_detection_by_resource_claim_and_annotation() -> None:
    claim = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: gpu, "
        "resourceClaimTemplateName: gpu}]\n"
        "  containers: [{name: c, image: i, resources: {claims: [{name: gpu}]}}]"
    )
    shared = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {gpu-fraction: '0.5'}\n"
        "spec:\n  containers: [{name: c, image: i}]"
    )
    cpu_only = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]"
    for text, expected in ((claim, True), (shared, True), (cpu_only, False)):
        doc = load_text("p.yaml", text).documents[0]
        assert uses_accelerators(next(pod_templates(doc))) is expected


def test_equal_resource_entries_are_read_alike_and_typed() -> None:
    """Entries written alike at the same path read alike across objects; a boolean, a float and a string are not
    the integer they equal (`true` is not a quantity, `"1"` and `1.0` keep what was written)."""
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\n"
        "spec:\n  containers: [{{name: c, resources: {{limits: {}}}}}]"
    )
    read = []
    for limits in ("{nvidia.com/gpu: 1}", "{nvidia.com/gpu: true}", "{nvidia.com/gpu: '1'}", "{nvidia.com/gpu: 1.0}"):
        doc = load_text("p.yaml", pod.format(limits)).documents[0]
        (container,) = next(pod_templates(doc)).containers
        read.append(container_resources(container).limits["nvidia.com/gpu"])
    integer, boolean, string, number = read
    assert integer.error is None and integer.raw == 1 and type(integer.raw) is int
    assert boolean.quantity is None and boolean.error is not None and boolean.raw is True
    assert string.raw == "1" and string.quantity == integer.quantity
    assert type(number.raw) is float and number.error is None
    assert integer.path == string.path == ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    again = load_text("p.yaml", pod.format("{nvidia.com/gpu: 1}")).documents[0]
    assert container_resources(next(pod_templates(again)).containers[0]).limits["nvidia.com/gpu"] == integer
