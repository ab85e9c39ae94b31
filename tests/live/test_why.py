"""`kubegpu audit --why` on fixture snapshots (one per cause), from dump files and from an API server over HTTPS."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.live.audit import AuditOptions
from kubegpu.live.client import ClusterOptions, read_cluster
from kubegpu.live.snapshot import load_snapshot
from kubegpu.live.why import explain_snapshot
from kubegpu.scheduler.gpu.why import Explanation
from tests.live.conftest import CLUSTER, TOKEN, https_api, tls_kubeconfig
from tests.paths import REPO_ROOT

WHY = REPO_ROOT / "tests" / "fixtures" / "why"


def _only(case: str) -> Explanation:
    report = explain_snapshot(load_snapshot([WHY / case]))
    assert len(report.explanations) == 1, report
    return report.explanations[0]


def test_the_guides_example_is_fragmentation() -> None:
    # 8 nodes x 8 GPUs with 2 free on each: 16 free GPUs, and an 8-GPU pod has nowhere to go
    e = _only("fragmentation")
    assert e.message == "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."
    assert e.reasons == {"Insufficient nvidia.com/gpu": 8}
    assert e.kinds == ("fragmentation",)
    assert e.causes[0].message.startswith("16 free GPUs on 8 nodes the pod may use, none with 8")
    assert e.causes[0].figures["largest_free_on_a_node"] == 2


def test_a_taint_keeps_the_pod_off_the_only_node_with_room() -> None:
    e = _only("taint")
    assert e.message == ("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu.")
    assert e.kinds == ("placement",)
    assert "gpu-c" in e.causes[0].message and "dedicated=inference:NoSchedule" in e.causes[0].message
    assert e.causes[0].figures["by_reason"] == {"node(s) had untolerated taint(s)": 1}


def test_a_quota_bound_queue() -> None:
    e = _only("quota")
    assert e.subject == "train/job-ft-7c1e2 (Kueue workload)"
    assert e.kinds == ("quota", "fits")  # the cluster has room: the ClusterQueue holds it back
    quota = e.causes[0]
    assert quota.figures["cluster_queue"] == "team-a" and quota.figures["requested"] == 8
    assert quota.figures["flavors"] == [
        {"flavor": "h100", "nominal_quota": 16, "reserved": 12, "used": 12, "borrowing_limit": None}
    ]
    assert "4 left" in quota.message and "4 more needed" in quota.message  # ours, then Kueue's own words


def test_a_gang_that_must_share_a_rack() -> None:
    e = _only("rack-split")
    assert (e.pods, e.gpus_per_pod) == (3, 8)
    assert e.message == ""  # each pod would find a node: kube-scheduler has nothing to say
    assert e.kinds == ("topology",)
    figures = e.causes[0].figures
    assert (figures["room_in_cluster"], figures["room_in_best_domain"]) == (4, 2)
    assert figures["level"] == "cloud.provider.com/topology-rack"


def test_a_kubelet_that_refuses_the_pod() -> None:
    # single-numa-node with 4 GPUs on each NUMA node: 8 GPUs cannot be aligned
    e = _only("kubelet")
    assert e.kinds == ("kubelet",)
    assert e.causes[0].figures["by_reason"] == {"TopologyAffinityError": 1}


def test_without_configz_the_kubelet_is_not_asked(tmp_path: Path) -> None:
    for name in ("nodes.json", "pods.json"):
        (tmp_path / name).write_text((WHY / "kubelet" / name).read_text())
    e = explain_snapshot(load_snapshot([tmp_path])).explanations[0]
    assert e.kinds == ("fits",)


def test_namespace_filter_and_the_recorded_cluster() -> None:
    report = explain_snapshot(load_snapshot([CLUSTER]), AuditOptions(namespace="train"))
    subjects = [e.subject for e in report.explanations]
    assert subjects == ["train/llm-big", "train/job-llm-ft-5d2c1 (Kueue workload)"]
    # ClusterQueue h100 (through LocalQueue train/h100) has 4 of 16 GPUs unreserved, and the only H100 node with
    # room for a pod of 4 is cordoned
    assert report.explanations[1].kinds == ("quota", "placement")
    assert "it may borrow from cohort gpu" in report.explanations[1].causes[0].message
    assert explain_snapshot(load_snapshot([CLUSTER]), AuditOptions(namespace="infer")).explanations == ()


def test_cli_text_and_json() -> None:
    runner = CliRunner()
    text = runner.invoke(app, ["audit", "--snapshot", str(WHY / "fragmentation"), "--why"])
    assert text.exit_code == 0, text.output
    assert "scheduler: 0/8 nodes are available: 8 Insufficient nvidia.com/gpu." in text.output
    assert "fragmentation: 16 free GPUs on 8 nodes" in text.output
    out = runner.invoke(app, ["audit", "--snapshot", str(WHY / "taint"), "--why", "-o", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["nodes"] == 3
    assert [c["kind"] for c in data["waiting"][0]["causes"]] == ["placement"]
    markdown = runner.invoke(app, ["audit", "--snapshot", str(WHY / "taint"), "--why", "-o", "markdown"])
    assert markdown.exit_code == 2 and "--why prints text or JSON" in markdown.output


def test_names_from_the_cluster_are_printed_safely(tmp_path: Path) -> None:
    pods = json.loads((WHY / "taint" / "pods.json").read_text())
    pods["items"][-1]["metadata"]["name"] = "evil\x1b[2J\n::warning::x"
    (tmp_path / "pods.json").write_text(json.dumps(pods))
    (tmp_path / "nodes.json").write_text((WHY / "taint" / "nodes.json").read_text())
    result = CliRunner().invoke(app, ["audit", "--snapshot", str(tmp_path), "--why"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "evil\\x1b[2J" in result.output
    assert not any(line.lstrip().startswith("::") for line in result.output.splitlines())


@pytest.mark.parametrize("case", ["fragmentation", "quota", "kubelet"])
def test_live_cluster_over_https(case: str, tmp_path: Path) -> None:
    """The same answer from an API server (recorded List answers and kubelet configz over real HTTPS) as from the
    dump files."""
    folder = WHY / case
    items: dict[str, list[object]] = {}
    configz: dict[str, object] = {}
    for dump in sorted(folder.glob("*.json")):
        data = json.loads(dump.read_text())
        if dump.name.startswith("configz-"):
            configz[dump.stem.removeprefix("configz-")] = data
            continue
        for item in data["items"]:
            items.setdefault(item["kind"], []).append(item)
    routes = {
        "/api/v1/nodes": ("NodeList", "v1", items.get("Node", [])),
        "/api/v1/pods": ("PodList", "v1", items.get("Pod", [])),
    }
    if "NodeResourceTopology" in items:
        routes["/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"] = (
            "NodeResourceTopologyList",
            "topology.node.k8s.io/v1alpha2",
            items["NodeResourceTopology"],
        )
    for kind, plural in (("ClusterQueue", "clusterqueues"), ("LocalQueue", "localqueues"), ("Workload", "workloads")):
        if kind in items:
            routes[f"/apis/kueue.x-k8s.io/v1beta2/{plural}"] = (f"{kind}List", "kueue.x-k8s.io/v1beta2", items[kind])
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with https_api(tmp_path) as (server, ca):
        for path, (kind, version, objects) in routes.items():
            body = {"apiVersion": version, "kind": kind, "metadata": {"resourceVersion": "1"}, "items": objects}
            server.expect_request(path, headers=auth).respond_with_json(body)
        for node, answer in configz.items():
            server.expect_request(f"/api/v1/nodes/{node}/proxy/configz", headers=auth).respond_with_json(answer)
        kubeconfig = tls_kubeconfig(tmp_path / "kubeconfig", server.url_for("/").rstrip("/"), ca.read_bytes())
        live = explain_snapshot(read_cluster(ClusterOptions(kubeconfig=kubeconfig)))
        cli = CliRunner().invoke(app, ["audit", "--cluster", "--kubeconfig", str(kubeconfig), "--why", "-o", "json"])
    assert cli.exit_code == 0, cli.output
    dumped = explain_snapshot(load_snapshot([folder]))
    assert [e.to_dict() for e in live.explanations] == [e.to_dict() for e in dumped.explanations]
    assert json.loads(cli.output)["waiting"] == [e.to_dict() for e in dumped.explanations]
    if case == "kubelet":
        assert live.explanations[0].kinds == ("kubelet",)


def test_the_documented_example_is_what_the_command_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)
    page = (REPO_ROOT / "docs" / "commands" / "audit.md").read_text()
    command = "$ kubegpu audit --snapshot tests/fixtures/why/fragmentation --why\n"
    shown = page.split(command, 1)[1].split("\n$ ", 1)[0]
    result = CliRunner().invoke(app, ["audit", "--snapshot", "tests/fixtures/why/fragmentation", "--why"])
    assert result.exit_code == 0
    assert result.output.rstrip("\n") == shown.rstrip("\n")


def _with_pods(tmp_path: Path, case: str, edit: Callable[[list[dict[str, Any]]], None]) -> Path:
    """A copy of a fixture case with its pods list changed by `edit` (a function of the items)."""
    for path in (WHY / case).glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text())
    pods = json.loads((WHY / case / "pods.json").read_text())
    edit(pods["items"])
    (tmp_path / "pods.json").write_text(json.dumps(pods))
    return tmp_path


def test_pods_of_one_group_are_explained_together_and_gates_are_named(tmp_path: Path) -> None:
    def two_workers(items: list[dict[str, Any]]) -> None:
        waiting = items.pop()
        for i in (0, 1):
            pod = json.loads(json.dumps(waiting))
            pod["metadata"] = {
                "name": f"w-{i}",
                "namespace": "train",
                "labels": {"scheduling.x-k8s.io/pod-group": "pg"},
            }
            if i:
                pod["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
            items.append(pod)

    report = explain_snapshot(load_snapshot([_with_pods(tmp_path, "fragmentation", two_workers)]))
    (e,) = report.explanations
    assert (e.subject, e.pods) == ("train/pg (pod group)", 2)
    assert e.kinds == ("gated", "fragmentation")
    assert e.causes[0].figures == {"gated_pods": ["train/w-1"]}


def test_a_workload_whose_queue_or_topology_level_is_unknown_is_explained_with_a_note(tmp_path: Path) -> None:
    # the workload names a LocalQueue the snapshot lacks and a topology level nothing defines
    for path in (WHY / "quota").glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text())
    kueue = json.loads((WHY / "quota" / "kueue.json").read_text())
    (workload,) = [item for item in kueue["items"] if item["kind"] == "Workload"]
    workload["spec"]["queueName"] = "gone"
    workload["spec"]["podSets"][0]["topologyRequest"] = {"required": "example.com/pod"}
    (tmp_path / "kueue.json").write_text(json.dumps(kueue))
    report = explain_snapshot(load_snapshot([tmp_path]))
    (e,) = report.explanations
    assert e.subject == "train/job-ft-7c1e2 (Kueue workload)" and "quota" not in e.kinds
    assert report.notes == (
        "workload train/job-ft-7c1e2 asks for topology level example.com/pod, which no Kueue Topology or "
        "--block-label/--rack-label names",
        "workload train/job-ft-7c1e2: LocalQueue train/gone is not in the snapshot, so its ClusterQueue's quota "
        "is not checked",
    )


def test_a_not_ready_node_counts_as_tainted(tmp_path: Path) -> None:
    for path in (WHY / "taint").glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text())
    nodes = json.loads((WHY / "taint" / "nodes.json").read_text())
    gpu_c = nodes["items"][2]
    del gpu_c["spec"]["taints"]
    gpu_c["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]
    (tmp_path / "nodes.json").write_text(json.dumps(nodes))
    (e,) = explain_snapshot(load_snapshot([tmp_path])).explanations
    assert e.reasons == {"node(s) had untolerated taint(s)": 1, "Insufficient nvidia.com/gpu": 2}
    assert "node.kubernetes.io/not-ready:NoSchedule" in e.causes[0].message


def test_a_zone_beyond_the_model_leaves_the_kubelet_unasked(tmp_path: Path) -> None:
    for path in (WHY / "kubelet").glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text())
    nrt = json.loads((WHY / "kubelet" / "noderesourcetopologies.json").read_text())
    nrt["items"][0]["zones"][1]["name"] = "node-4000000000"
    (tmp_path / "noderesourcetopologies.json").write_text(json.dumps(nrt))
    report = explain_snapshot(load_snapshot([tmp_path]))
    assert report.explanations[0].kinds == ("fits",)
    assert any("no NUMA zones the kubelet model can build" in note for note in report.notes)


def test_smt_alignment_refusal(tmp_path: Path) -> None:
    # full-pcpus-only on a node with two threads per core (NFD's label): 3 CPUs are not whole cores
    for path in (WHY / "kubelet").glob("*.json"):
        (tmp_path / path.name).write_text(path.read_text())
    configz = json.loads((WHY / "kubelet" / "configz-gpu-numa.json").read_text())
    configz["kubeletconfig"].update(
        {"topologyManagerPolicy": "none", "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}
    )
    (tmp_path / "configz-gpu-numa.json").write_text(json.dumps(configz))
    nodes = json.loads((WHY / "kubelet" / "nodes.json").read_text())
    nodes["items"][0]["metadata"]["labels"]["feature.node.kubernetes.io/cpu-hardware_multithreading"] = "true"
    (tmp_path / "nodes.json").write_text(json.dumps(nodes))
    pods = json.loads((WHY / "kubelet" / "pods.json").read_text())
    resources = pods["items"][0]["spec"]["containers"][0]["resources"]
    resources["requests"]["cpu"] = resources["limits"]["cpu"] = "3"
    (tmp_path / "pods.json").write_text(json.dumps(pods))
    (e,) = explain_snapshot(load_snapshot([tmp_path])).explanations
    assert e.kinds == ("kubelet",)
    assert e.causes[0].figures["by_reason"] == {"SMTAlignmentError": 1}
    assert "not multiple cpus per core = 2" in e.causes[0].message


def test_a_snapshot_without_nodes(tmp_path: Path) -> None:
    (tmp_path / "pods.json").write_text((WHY / "taint" / "pods.json").read_text())
    report = explain_snapshot(load_snapshot([tmp_path]))
    assert report.explanations == () and "no nodes available to schedule pods" in report.notes[-1]


def test_the_kubelet_is_asked_about_a_kueue_workloads_pods(tmp_path: Path) -> None:
    for path in (WHY / "kubelet").glob("*.json"):
        if path.name != "pods.json":
            (tmp_path / path.name).write_text(path.read_text())
    pod = json.loads((WHY / "kubelet" / "pods.json").read_text())["items"][0]
    workload = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "job-8gpu", "namespace": "train"},
        "spec": {"queueName": "team", "podSets": [{"name": "main", "count": 1, "template": {"spec": pod["spec"]}}]},
        "status": {},
    }
    (tmp_path / "kueue.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [workload]}))
    (e,) = explain_snapshot(load_snapshot([tmp_path])).explanations
    assert e.subject == "train/job-8gpu (Kueue workload)"
    assert e.kinds == ("kubelet",)
    assert e.causes[0].figures["by_reason"] == {"TopologyAffinityError": 1}
