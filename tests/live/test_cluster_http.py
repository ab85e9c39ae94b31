"""The audit of the recorded cluster, read over real HTTP with lightkube, vs hand-derived figures.

The cluster (tests/fixtures/cluster): two H100 nodes and one cordoned H100 node (8 GPUs, 190 CPUs
allocatable each), two L4 nodes (4 GPUs, 46 CPUs); a node-exporter (100m CPU) on every node.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from kubegpu.errors import InputError
from kubegpu.live.audit import AuditReport, audit
from kubegpu.live.client import ClusterOptions, read_cluster
from kubegpu.live.snapshot import load_snapshot
from tests.live.conftest import CLUSTER, ServeFn, recorded, status, write_kubeconfig


def _by_node(report: AuditReport) -> dict[str, dict[str, object]]:
    return {n["name"]: n for n in report.to_dict()["nodes"]}


def check_recorded_cluster(report: AuditReport) -> None:
    data = report.to_dict()
    nodes = _by_node(report)
    # Used GPUs per node: h100-a llm-0 8; h100-b llm-1 4 + embed-0 1; h100-c batch-0 2;
    # l4-a l4-serve-0 1; l4-b l4-serve-1 1 (old-job Succeeded: its 2 GPUs are free again).
    assert {n: v["free_gpus"] for n, v in nodes.items()} == {
        "h100-a": 0,
        "h100-b": 3,
        "h100-c": 6,
        "l4-a": 3,
        "l4-b": 3,
    }
    assert data["free_gpus"] == 15
    # Stranded: h100-c is cordoned -> all 6. l4-a has 46 - 36 - 0.1 = 9.9 CPUs free; the L4 shapes
    # need 36 or 6 CPUs (l4-serve-1's init container asks 6 > its 4), embed-0's any-GPU shape 8:
    # one pod of either small shape fits (8 + 6 > 9.9), so 1 of 3 GPUs is usable -> 2 stranded.
    # h100-b (133.9 CPUs free) takes 3 embed-0 pods, l4-b (39.9 free) 3 l4-serve-1 pods -> 0.
    assert {n: v["stranded_gpus"] for n, v in nodes.items()} == {
        "h100-a": 0,
        "h100-b": 0,
        "h100-c": 6,
        "l4-a": 2,
        "l4-b": 0,
    }
    assert data["stranded_gpus"] == 8
    assert nodes["h100-c"]["stranded_reason"] == "node is cordoned"
    # Most GPUs one new pod could get: 3 (h100-b, l4-a, l4-b tie; h100-c's 6 are cordoned).
    assert data["largest_placeable_gpus"] == 3
    # FGD: tasks = GPU pods placed or pending + the pending Kueue pod set (2 pods): 9 tasks,
    # p = 3/9 (4 GPU H100), 2/9 (8 GPU H100), 1/9 each for embed (1 GPU any, 8 CPU), batch
    # (2 GPU H100, 16 CPU), l4-serve-0 (1 GPU L4, 36 CPU), l4-serve-1 (1 GPU L4, 6 CPU).
    # h100-b: 3 idle, embed and batch fit -> 3000 * 7/9; h100-c cordoned -> 6000;
    # l4-a: embed and l4-serve-1 fit -> 3000 * 7/9; l4-b: embed, both L4 shapes fit -> 3000 * 6/9.
    frag = data["fragmentation"]
    assert frag["milli_gpus"] == pytest.approx(7000 / 3 + 6000 + 7000 / 3 + 2000, abs=1e-3)
    assert frag["ratio"] == pytest.approx((14000 / 3 + 8000) / 15000, abs=1e-4)
    # Pending GPU demand: llm-big 8 + Kueue workload 2 x 4 (the admitted workload does not count).
    assert data["pending_gpu_pods"] == ["train/llm-big"]
    assert data["pending_gpus"] == 16
    # Kueue quota: h100 has 16 nominal, 12 reserved -> 4 unreserved < the 8 the pending
    # workload asks, which is why it waits even before capacity matters; l4 is idle.
    assert [
        (q["name"], q["nominal_quota"], q["reserved"], q["unreserved_quota"], q["pending_workloads"])
        for q in data["queues"]
    ] == [("h100", 16, 12, 4, 1), ("l4", 8, 0, 8, 0)]
    # Domains come from the Kueue Topology levels (hostname dropped).
    domains = {(d["label"].rsplit("-", 1)[-1], d["value"]): d for d in data["domains"]}
    assert {k: d["free_gpus"] for k, d in domains.items()} == {
        ("block", "b1"): 3,
        ("block", "b2"): 12,
        ("rack", "r1"): 0,
        ("rack", "r2"): 3,
        ("rack", "r3"): 6,
        ("rack", "r4"): 6,
    }
    gangs = {(g["product"], g["gpus_per_pod"]): g["pods"] for g in domains[("block", "b2")]["largest_gang"]}
    # b2: only the L4 nodes are schedulable, 3 + 3 free: 6 one-GPU pods, 2 two-GPU pods, no 4s.
    assert gangs == {("NVIDIA-L4", 1): 6, ("NVIDIA-L4", 2): 2, ("NVIDIA-L4", 4): 0, ("NVIDIA-L4", 8): 0}
    assert domains[("rack", "r3")]["largest_gang"] == []
    # NRT of h100-b: zone node-1 has 1 GPU in use and no pinned CPU (all 56 pinned CPUs of llm-1
    # and embed-0 are on node-0); both pods pin CPUs, so the holder is one of them.
    assert data["numa_misplaced"] == [
        {
            "node": "h100-b",
            "zone": "node-1",
            "pods": ["infer/embed-0", "train/llm-1"],
            "definite": False,
            "message": "NUMA zone node-1 has 1 GPU(s) in use and no pinned CPU; at least one of "
            "infer/embed-0, train/llm-1 runs on CPUs of another NUMA node",
        }
    ]


def test_audit_over_http_matches_hand_derived_figures(serve_cluster: ServeFn) -> None:
    kubeconfig = serve_cluster()
    snapshot = read_cluster(ClusterOptions(kubeconfig=kubeconfig))
    assert [n.name for n in snapshot.nodes] == ["h100-a", "h100-b", "h100-c", "l4-a", "l4-b"]
    assert set(snapshot.kubelet_configs) == {"h100-b"}
    assert snapshot.kubelet_configs["h100-b"]["cpuManagerPolicy"] == "static"
    # the other four nodes' configz answered 404 here: noted, not fatal
    assert any("kubelet configz not read for: h100-a (404)" in n for n in snapshot.notes)
    check_recorded_cluster(audit(snapshot))


def test_snapshot_dump_gives_the_same_audit() -> None:
    report = audit(load_snapshot([CLUSTER]))
    check_recorded_cluster(report)


def test_kubectl_mixed_list_dump(tmp_path: Path) -> None:
    """`kubectl get nodes,pods -A -o json` prints one List whose items carry kind and apiVersion."""
    import json

    nodes = json.loads((CLUSTER / "nodes.json").read_text())["items"]
    pods = json.loads((CLUSTER / "pods.json").read_text())["items"]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes + pods}))
    report = audit(load_snapshot([dump])).to_dict()
    # without Kueue objects and NRT: 15 free; the pending Kueue pod set no longer counts
    assert report["free_gpus"] == 15
    assert report["pending_gpus"] == 8
    assert report["numa_misplaced"] == []


def test_missing_crds_and_forbidden_configz_are_notes(serve_cluster: ServeFn) -> None:
    forbidden = status(403, "Forbidden", 'nodes "h100-a" is forbidden: cannot get nodes/proxy')
    no_topologies = status(403, "Forbidden", "topologies.kueue.x-k8s.io is forbidden")
    kubeconfig = serve_cluster(
        overrides={
            "/api/v1/nodes/h100-a/proxy/configz": (403, forbidden),
            "/apis/kueue.x-k8s.io/v1beta2/topologies": (403, no_topologies),
        },
        missing=(
            "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
            "/apis/kueue.x-k8s.io/v1beta2/workloads",
        ),
    )
    snapshot = read_cluster(ClusterOptions(kubeconfig=kubeconfig))
    notes = " | ".join(snapshot.notes)
    assert "noderesourcetopologies.topology.node.k8s.io (v1alpha2) is not served" in notes
    assert "workloads.kueue.x-k8s.io (v1beta2/v1beta1) is not served" in notes
    assert "clusterqueues.kueue.x-k8s.io (v1beta2/v1beta1) is not served" in notes
    assert "nodes/proxy get is forbidden" in notes
    assert "reading topologies.kueue.x-k8s.io is forbidden" in notes
    assert snapshot.node_topologies == () and snapshot.kubelet_configs == {}
    assert audit(snapshot).free_gpus == 15


def test_forbidden_cluster_wide_pods_falls_back_to_namespace(serve_cluster: ServeFn, httpserver: object) -> None:
    forbidden = status(403, "Forbidden", 'pods is forbidden: cannot list resource "pods"')
    import json

    infer = json.loads((CLUSTER / "pods.json").read_text())
    infer["items"] = [p for p in infer["items"] if p["metadata"]["namespace"] == "infer"]
    kubeconfig = serve_cluster(
        overrides={"/api/v1/pods": (403, forbidden), "/api/v1/namespaces/infer/pods": (200, infer)}
    )
    snapshot = read_cluster(ClusterOptions(kubeconfig=kubeconfig, namespace="infer"))
    assert {p.namespace for p in snapshot.pods} == {"infer"}
    assert any("pods of all namespaces are forbidden" in n for n in snapshot.notes)
    with pytest.raises(InputError, match=r"cannot list pods .*\(403\)"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig))


def test_context_selection(serve_cluster: ServeFn) -> None:
    kubeconfig = serve_cluster()
    assert read_cluster(ClusterOptions(kubeconfig=kubeconfig, context="other")).nodes
    with pytest.raises(InputError, match="kubeconfig"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig, context="nope"))


def test_unreachable_server_is_one_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{port}")
    with pytest.raises(InputError, match="cannot reach the API server"):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig, timeout_s=2.0))


def test_missing_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="kubeconfig not found"):
        read_cluster(ClusterOptions(kubeconfig=tmp_path / "absent"))


def test_pods_are_listed_in_pages(serve_cluster: ServeFn, httpserver: HTTPServer) -> None:
    """The client lists with limit=500 and follows metadata.continue, as kubectl does."""
    pods = recorded("pods.json")
    assert isinstance(pods, dict)
    first = {**pods, "metadata": {"resourceVersion": "91240", "continue": "page-2"}, "items": pods["items"][:5]}
    second = {**pods, "metadata": {"resourceVersion": "91240"}, "items": pods["items"][5:]}
    httpserver.expect_request("/api/v1/pods", query_string={"limit": "500", "continue": "page-2"}).respond_with_json(
        second
    )
    httpserver.expect_request("/api/v1/pods", query_string={"limit": "500"}).respond_with_json(first)
    kubeconfig = serve_cluster()
    snapshot = read_cluster(ClusterOptions(kubeconfig=kubeconfig))
    assert len(snapshot.pods) == len(pods["items"])
    pages = [req.args.get("continue") for req, _ in httpserver.log if req.path == "/api/v1/pods"]
    assert pages == [None, "page-2"]
    check_recorded_cluster(audit(snapshot))


@pytest.mark.parametrize(
    "api, command, message",
    [
        ("v1beta1", "false", "kubeconfig credentials failed: Exec false returned 1"),
        ("v1beta1", "/nonexistent/kubectl-credential", "kubeconfig credentials failed: No such file"),
        # lightkube 1.0.1 implements the v1beta1 exec protocol only: said in one line
        ("v1", "true", "kubeconfig credentials failed: auth exec api version .* not implemented"),
    ],
)
def test_failing_exec_credential_plugin(
    tmp_path: Path, httpserver: HTTPServer, api: str, command: str, message: str
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: k\n  cluster:\n    server: {httpserver.url_for('/').rstrip('/')}\n"
        "users:\n- name: u\n  user:\n    exec:\n"
        f"      apiVersion: client.authentication.k8s.io/{api}\n"
        f"      command: '{command}'\n      interactiveMode: Never\n"
        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
    )
    with pytest.raises(InputError, match=message):
        read_cluster(ClusterOptions(kubeconfig=kubeconfig))
