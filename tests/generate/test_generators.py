"""Every generated object validates: core kinds against Kubernetes 1.35, CRDs against ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubegpu.errors import InputError
from kubegpu.generate import (
    computedomain,
    fixes,
    kai,
    kueue,
    prepull,
    scheduler,
    volcano,
    workload,
)
from kubegpu.generate.output import Generated
from kubegpu.generate.validate import SchemaViolation, validate_object, validate_workload


def validate_all(result: Generated) -> list[str]:
    """Validate every object and every patched workload; also check the text parses as emitted."""
    used = [validate_object(obj) for obj in result.objects()]
    for obj in result.patched:
        used += validate_workload(obj)
    rendered = [doc for f in result.files if f.text is None for doc in yaml.safe_load_all(f.render())]
    assert rendered == [doc.obj for doc in result.documents]
    return used


def test_validation_rejects_unknown_fields_and_bad_enums() -> None:
    with pytest.raises(SchemaViolation, match="unexpected"):
        validate_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "dat": {}})
    with pytest.raises(SchemaViolation, match="queueingStrategy"):
        validate_object(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": "q"},
                "spec": {"queueingStrategy": "FIFO"},
            }
        )
    with pytest.raises(SchemaViolation, match="nodeLabels"):
        validate_object(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": "f"},
                "spec": {"topologyName": "t"},
            }
        )
    with pytest.raises(SchemaViolation, match="weight"):
        bad = scheduler.scheduler_config(scheduler.SchedulerOptions()).obj
        bad["profiles"][1]["pluginConfig"][0]["args"]["scoringStrategy"]["resources"][0]["weight"] = 0
        validate_object(bad)


@pytest.mark.parametrize("strategy", scheduler.STRATEGIES)
@pytest.mark.parametrize("configmap", [False, True])
def test_scheduler(strategy: str, configmap: bool) -> None:
    result = scheduler.generate(scheduler.SchedulerOptions(strategy=strategy, configmap=configmap))
    validate_all(result)
    obj = result.objects()[0]
    if configmap:
        assert obj["kind"] == "ConfigMap"
        obj = yaml.safe_load(obj["data"]["scheduler-config.yaml"])
        validate_object(obj)
    profiles = {p["schedulerName"]: p for p in obj["profiles"]}
    assert set(profiles) == {"default-scheduler", "gpu-binpack"}
    args = profiles["gpu-binpack"]["pluginConfig"][0]["args"]["scoringStrategy"]
    assert args["type"] == strategy
    assert args["resources"] == [
        {"name": "nvidia.com/gpu", "weight": 10},
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
    ]


def test_scheduler_gpu_weight_and_limits() -> None:
    obj = scheduler.scheduler_config(scheduler.SchedulerOptions(gpu_weight=42)).obj
    assert obj["profiles"][1]["pluginConfig"][0]["args"]["scoringStrategy"]["resources"][0]["weight"] == 42
    for bad in (0, 101):
        with pytest.raises(InputError, match=r"1\.\.100"):
            scheduler.generate(scheduler.SchedulerOptions(gpu_weight=bad))
    with pytest.raises(InputError, match="strategy"):
        scheduler.generate(scheduler.SchedulerOptions(strategy="LeastAllocated"))


@pytest.mark.parametrize("topology", [None, "gke", "eks", "aks", "nvl72", "rack.example/block,kubernetes.io/hostname"])
def test_kueue(topology: str | None) -> None:
    options = kueue.KueueOptions(
        gpus_per_node=8, nodes=4, cpus_per_node="96", memory_per_node="1800Gi", topology=topology
    )
    result = kueue.generate(options)
    validate_all(result)
    by_kind = {o["kind"]: o for o in result.objects()}
    cq = by_kind["ClusterQueue"]["spec"]["resourceGroups"][0]
    quotas = {r["name"]: r["nominalQuota"] for r in cq["flavors"][0]["resources"]}
    assert quotas == {"cpu": "384", "memory": "7200Gi", "nvidia.com/gpu": 32}
    assert cq["coveredResources"] == list(quotas)
    assert by_kind["LocalQueue"]["spec"]["clusterQueue"] == by_kind["ClusterQueue"]["metadata"]["name"]
    if topology is None:
        assert "Topology" not in by_kind
        return
    levels = [lvl["nodeLabel"] for lvl in by_kind["Topology"]["spec"]["levels"]]
    assert by_kind["ResourceFlavor"]["spec"]["topologyName"] == by_kind["Topology"]["metadata"]["name"]
    assert levels[-1] == "kubernetes.io/hostname"
    expected_first = {
        "gke": "cloud.google.com/gce-topology-block",
        "eks": "topology.k8s.aws/network-node-layer-1",
        "aks": "ib/torset",
        "nvl72": "nvidia.com/gpu.clique",
    }.get(topology, "rack.example/block")
    assert levels[0] == expected_first


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("kubernetes.io/hostname,rack", "last"),
        ("a,a", "different"),
        ("not a label!", "valid node label"),
        (",", "needs"),
    ],
)
def test_kueue_bad_topology(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        kueue.topology_levels(spec)


def test_kueue_bad_numbers() -> None:
    with pytest.raises(InputError):
        kueue.generate(kueue.KueueOptions(gpus_per_node=0, nodes=1, cpus_per_node="1", memory_per_node="1Gi"))
    with pytest.raises(InputError, match="memory-per-node"):
        kueue.generate(kueue.KueueOptions(gpus_per_node=1, nodes=1, cpus_per_node="1", memory_per_node="lots"))


def test_volcano_podgroup_min_member_is_every_pod(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "train-job.yaml"))
    result = volcano.generate(volcano.VolcanoOptions(gpus=32), job)
    validate_all(result)
    pg = next(o for o in result.objects() if o["kind"] == "PodGroup")
    assert pg["spec"]["minMember"] == 4
    assert pg["spec"]["minResources"] == {"cpu": "62", "memory": "512Gi", "nvidia.com/gpu": 32}
    patched = result.patched[0]["spec"]["template"]
    assert patched["metadata"]["annotations"][volcano.GROUP_ANNOTATION] == pg["metadata"]["name"]
    assert patched["spec"]["schedulerName"] == "volcano"
    conf = yaml.safe_load(
        next(o for o in result.objects() if o["kind"] == "ConfigMap")["data"]["volcano-scheduler.conf"]
    )
    binpack = next(p for t in conf["tiers"] for p in t["plugins"] if p["name"] == "binpack")
    assert binpack["arguments"]["binpack.resources.nvidia.com/gpu"] == 10
    assert binpack["arguments"]["binpack.resources"] == "nvidia.com/gpu"


def test_volcano_without_job() -> None:
    result = volcano.generate(volcano.VolcanoOptions())
    validate_all(result)
    assert [o["kind"] for o in result.objects()] == ["Queue", "ConfigMap"]


@pytest.mark.parametrize("strategy", ["binpack", "spread"])
def test_kai(data_dir: Path, strategy: str) -> None:
    job = workload.one_workload(str(data_dir / "train-job.yaml"))
    result = kai.generate(kai.KaiOptions(gpus=16, strategy=strategy, gpu_limit=24), job)
    validate_all(result)
    queues = {o["metadata"]["name"]: o for o in result.objects() if o["kind"] == "Queue"}
    assert queues["gpu-team"]["spec"]["parentQueue"] == "default"
    assert queues["gpu-team"]["spec"]["resources"]["gpu"]["quota"] == 16
    assert queues["gpu-team"]["spec"]["resources"]["gpu"]["limit"] == 24
    shard = next(o for o in result.objects() if o["kind"] == "SchedulingShard")
    assert shard["spec"]["placementStrategy"] == {"gpu": strategy, "cpu": strategy}
    template = result.patched[0]["spec"]["template"]
    assert template["metadata"]["labels"][kai.QUEUE_LABEL] == "gpu-team"
    assert template["spec"]["schedulerName"] == "kai-scheduler"


@pytest.mark.parametrize(
    ("kind", "key", "own_group"), [("PyTorchJob", "pytorch", False), ("PaddleJob", "paddle", True)]
)
def test_kai_gangs_only_the_kinds_its_pod_grouper_maps(tmp_path: Path, kind: str, key: str, own_group: bool) -> None:
    """KAI's pod-grouper hub maps PyTorchJob (one PodGroup for all pods) but not PaddleJob: gen kai adds the
    PodGroup itself for the kinds it does not map, as lint's gang-missing says."""
    path = tmp_path / "job.yaml"
    path.write_text(
        f"apiVersion: kubeflow.org/v1\nkind: {kind}\nmetadata: {{name: j}}\nspec:\n  {key}ReplicaSpecs:\n"
        "    Worker:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
        "          - {name: c, image: example.com/train:1, resources: {limits: {nvidia.com/gpu: 1}}}\n"
    )
    result = kai.generate(kai.KaiOptions(gpus=8), workload.one_workload(str(path)))
    assert any(o["kind"] == "PodGroup" for o in result.objects()) is own_group


def test_kai_bad_limits() -> None:
    with pytest.raises(InputError, match="gpu-limit"):
        kai.generate(kai.KaiOptions(gpus=16, gpu_limit=8))


def test_computedomain(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "train-job.yaml"))
    for wait in (False, True):
        result = computedomain.generate(job, computedomain.ComputeDomainOptions(wait_for_all_nodes=wait))
        validate_all(result)
        cd = next(o for o in result.objects() if o["kind"] == "ComputeDomain")
        assert cd["spec"]["numNodes"] == (4 if wait else 0)
        spec = result.patched[0]["spec"]["template"]["spec"]
        claim = cd["spec"]["channel"]["resourceClaimTemplate"]["name"]
        assert spec["resourceClaims"] == [{"name": "compute-domain-channel", "resourceClaimTemplateName": claim}]
        assert spec["containers"][0]["resources"]["claims"] == [{"name": "compute-domain-channel"}]
        term = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        assert term["topologyKey"] == "nvidia.com/gpu.clique"


def test_computedomain_refuses_what_cannot_fit(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "train-job.yaml"))
    with pytest.raises(InputError, match="one NVLink domain"):
        computedomain.generate(job, computedomain.ComputeDomainOptions(gpus_per_domain=16))
    web = workload.one_workload(str(data_dir / "mixed.yaml"), name="web")
    with pytest.raises(InputError, match="no GPUs"):
        computedomain.generate(web, computedomain.ComputeDomainOptions())


def test_prepull(data_dir: Path) -> None:
    loads = workload.load_workloads([str(data_dir / n) for n in ("train-job.yaml", "mixed.yaml")])
    result = prepull.generate(loads, prepull.PrepullOptions())
    validate_all(result)
    ds: dict[str, Any] = result.objects()[0]
    spec = ds["spec"]["template"]["spec"]
    images = [c["image"] for c in spec["initContainers"]]
    assert images == [
        "nvcr.io/nvidia/pytorch:24.05-py3",
        "amazon/aws-cli:2.17.0",
        "nvcr.io/nvidia/nemo:24.07",
    ]
    assert "nginx:1.27" not in images  # not a GPU workload
    tolerated = {(t["key"], t.get("value")) for t in spec["tolerations"]}
    assert {("nvidia.com/gpu", None), ("dedicated", "gpu")} <= tolerated
    assert spec["imagePullSecrets"] == [{"name": "ngc"}]
    for c in [*spec["initContainers"], *spec["containers"]]:
        assert c["resources"]["requests"] == c["resources"]["limits"] == prepull.TINY
    match = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert match["nodeSelectorTerms"][0]["matchExpressions"][0]["key"] == "nvidia.com/gpu.present"


def test_prepull_needs_gpu_workloads(data_dir: Path) -> None:
    web = workload.load_workloads([str(data_dir / "mixed.yaml")])[:1]
    with pytest.raises(InputError, match="no GPU workload"):
        prepull.generate(web, prepull.PrepullOptions())


@pytest.mark.parametrize("names", [["dshm"], ["qos"], ["pull-policy"], ["scheduler"], list(fixes.FIXES)])
def test_fixes(data_dir: Path, names: list[str]) -> None:
    job = workload.one_workload(str(data_dir / "serve-pinned.yaml"))
    result = fixes.generate(job, names, fixes.FixOptions()).generated
    validate_all(result)
    spec = result.patched[0]["spec"]["template"]["spec"]
    vllm, metrics = spec["containers"]
    if "dshm" in names:  # half the pod's memory limit (64Gi + 64Mi), in whole GiB
        assert vllm["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
        assert "volumeMounts" not in metrics  # the sidecar is not a GPU container
        assert spec["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}}]
    else:
        assert "volumes" not in spec
    if "qos" in names:  # the larger of request and limit, in every container, the sidecar too
        assert vllm["resources"]["requests"] == {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 1}
        assert metrics["resources"]["requests"] == {"cpu": "100m", "memory": "64Mi"}
    else:
        assert vllm["resources"]["requests"]["cpu"] == "6"
    if "pull-policy" in names:  # the images are pinned
        assert {c["imagePullPolicy"] for c in spec["containers"]} == {"IfNotPresent"}
    else:
        assert {c["imagePullPolicy"] for c in spec["containers"]} == {"Always"}
    assert spec.get("schedulerName") == ("gpu-binpack" if "scheduler" in names else None)


def test_fixes_only_what_the_rules_fix(data_dir: Path) -> None:
    inference = workload.one_workload(str(data_dir / "inference.yaml"))
    with pytest.raises(InputError, match="needs none of: qos"):  # limits only: already Guaranteed
        fixes.generate(inference, ["qos"], fixes.FixOptions())
    with pytest.raises(InputError, match=r"not fixed: KG301 .*pin a version tag"):  # :latest stays Always
        fixes.generate(inference, ["pull-policy"], fixes.FixOptions())
    both = fixes.generate(inference, ["dshm", "pull-policy"], fixes.FixOptions())
    assert [line.split(":")[0] for line in both.not_fixed] == ["KG301 image-pull-always"]
    ops = {op["path"] for doc in both.generated.files[1].documents for op in doc.obj}
    assert ops == {"/spec/template/spec/volumes", "/spec/template/spec/containers/0/volumeMounts"}


def test_scheduler_fix_keeps_another_scheduler(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "serve-pinned.yaml"))
    spec = job.obj["spec"]["template"]["spec"]
    volcano_job = workload.Workload(
        job.source,
        job.line,
        {
            **job.obj,
            "spec": {
                **job.obj["spec"],
                "template": {**job.obj["spec"]["template"], "spec": {**spec, "schedulerName": "kai-scheduler"}},
            },
        },
        job.templates,
    )
    with pytest.raises(InputError, match="needs none of: scheduler"):
        fixes.generate(volcano_job, ["scheduler"], fixes.FixOptions())
    named = fixes.generate(job, ["scheduler"], fixes.FixOptions(scheduler_name="packer"))
    assert named.patched["spec"]["template"]["spec"]["schedulerName"] == "packer"


def test_dshm_size_and_idempotence(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "train-job.yaml"))
    result = fixes.generate(job, ["dshm"], fixes.FixOptions(shm_size="48Gi"))
    assert result.patched["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "48Gi"
    again = workload.Workload(job.source, job.line, result.patched, job.templates)
    with pytest.raises(InputError, match="needs none"):
        fixes.generate(again, ["dshm"], fixes.FixOptions())


@pytest.mark.parametrize("size", ["64Mi", "1Mi", "67108864", "0"])
def test_dshm_size_at_or_below_the_default_is_refused(data_dir: Path, size: str) -> None:
    job = workload.one_workload(str(data_dir / "train-job.yaml"))
    with pytest.raises(InputError, match=rf'--size: expected a quantity above 64Mi.*got "{size}" \(not above 64Mi\)'):
        fixes.generate(job, ["dshm"], fixes.FixOptions(shm_size=size))
    with pytest.raises(InputError, match=r'got "lots" \(not a quantity\)'):
        fixes.generate(job, ["dshm"], fixes.FixOptions(shm_size="lots"))


def test_dshm_size_above_the_memory_limit_is_not_applied(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "train-job.yaml"))  # memory limit 160Gi
    with pytest.raises(InputError, match=r"not fixed: KG201 .*\(400Gi\) is above the pod's memory limit \(160Gi\)"):
        fixes.generate(job, ["dshm"], fixes.FixOptions(shm_size="400Gi"))


def test_dshm_without_memory_limit(data_dir: Path) -> None:
    """As `kubegpu fix`: no size is derived without a memory limit (the finding says so); --size gives one."""
    tune = workload.one_workload(str(data_dir / "mixed.yaml"), name="finetune")
    with pytest.raises(InputError, match=r"not fixed: KG201 .*set memory limits.*\(or give --size\)$"):
        fixes.generate(tune, ["dshm"], fixes.FixOptions())
    sized = fixes.generate(tune, ["dshm"], fixes.FixOptions(shm_size="8Gi"))
    assert sized.patched["spec"]["template"]["spec"]["volumes"] == [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}
    ]


def test_qos_needs_values(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "mixed.yaml"), name="finetune")
    with pytest.raises(InputError, match=r"not fixed: KG101 .*no cpu request or limit"):
        fixes.generate(job, ["qos"], fixes.FixOptions())


def test_manifest_errors(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"bad\.yaml:\d+: not valid YAML"):
        workload.one_workload(str(data_dir / "bad.yaml"))
    with pytest.raises(InputError, match="no such file"):
        workload.one_workload(str(tmp_path / "missing.yaml"))
    with pytest.raises(InputError, match="several workloads"):
        workload.one_workload(str(data_dir / "mixed.yaml"))
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just a string\n")
    assert workload.load_workloads([str(scalar)]) == []  # not an object: skipped, as lint does
    with pytest.raises(InputError, match="no workload with a pod template"):
        workload.one_workload(str(scalar))


def test_crd_workloads_patch_every_role(data_dir: Path) -> None:
    job = workload.one_workload(str(data_dir / "pytorchjob.yaml"))
    assert [(r.role, r.pods) for r in job.templates] == [("Master", 1), ("Worker", 3)]
    vol = volcano.generate(volcano.VolcanoOptions(), job)
    assert validate_all(vol)
    pg = next(o for o in vol.objects() if o["kind"] == "PodGroup")
    assert pg["spec"]["minMember"] == 4
    k = kai.generate(kai.KaiOptions(gpus=32), job)
    validate_all(k)
    assert "PodGroup" not in [o["kind"] for o in k.objects()]  # KAI's pod-grouper gangs PyTorchJobs
    cd = computedomain.generate(job, computedomain.ComputeDomainOptions())
    validate_all(cd)
    for role in ("Master", "Worker"):
        spec = cd.patched[0]["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]
        assert spec["resourceClaims"][0]["name"] == "compute-domain-channel"


def test_jobset_and_kserve(data_dir: Path) -> None:
    from kubegpu.generate import modelcache

    jobset = workload.one_workload(str(data_dir / "more-kinds.yaml"), name="multislice")
    assert jobset.pods == 8
    vol = volcano.generate(volcano.VolcanoOptions(), jobset)
    validate_all(vol)
    assert next(o for o in vol.objects() if o["kind"] == "PodGroup")["spec"]["minMember"] == 8
    kai_result = kai.generate(kai.KaiOptions(gpus=32), jobset)
    validate_all(kai_result)
    assert any(o["kind"] == "PodGroup" for o in kai_result.objects())  # a JobSet: KAI's own gang
    isvc = workload.one_workload(str(data_dir / "more-kinds.yaml"), name="chat")
    cache = modelcache.generate(
        modelcache.ModelCacheOptions(model="m", source="hf://a/b", size="5Gi", min_replicas=2), isvc
    )
    predictor = cache.patched[0]["spec"]["predictor"]
    assert predictor["minReplicas"] == 2
    assert predictor["containers"][0]["volumeMounts"][0]["mountPath"] == "/models"


def test_kueue_sizes_follow_the_generated_kubelet_config() -> None:
    from kubegpu.generate import kubelet as kgen
    from kubegpu.topology.presets import load_preset
    from kubegpu.units.quantity import parse_quantity

    node = load_preset("dgx-h100")
    gpus, cpu, memory = kueue.sizes_from_node(node)
    config = kgen.plan(node, kgen.KubeletOptions()).config
    reserved_cpus = 4  # 0-1,112-113
    assert config["reservedSystemCPUs"] == "0-1,112-113"
    assert (gpus, cpu) == (8, str(224 - reserved_cpus))
    reservation = sum(parse_quantity(r["limits"]["memory"]).ceil for r in config["reservedMemory"])
    assert parse_quantity(memory).ceil == sum(n.memory_bytes for n in node.numa_nodes) - reservation


def test_line_comment_suppressions_count_as_in_kubegpu_fix(data_dir: Path, tmp_path: Path) -> None:
    """A `# kubegpu: ignore[...]` comment silences the rule for gen fixes too (it lints the object without them)."""
    text = (data_dir / "serve-pinned.yaml").read_text()
    quiet = tmp_path / "serve.yaml"
    quiet.write_text(text.replace("        - name: vllm\n", "        - name: vllm  # kubegpu: ignore[KG201]\n"))
    job = workload.one_workload(str(quiet))
    with pytest.raises(InputError, match="needs none of: dshm"):
        fixes.generate(job, ["dshm"], fixes.FixOptions())
    both = fixes.generate(job, ["dshm", "pull-policy"], fixes.FixOptions())
    assert "volumes" not in both.patched["spec"]["template"]["spec"]
    assert {c["imagePullPolicy"] for c in both.patched["spec"]["template"]["spec"]["containers"]} == {"IfNotPresent"}
