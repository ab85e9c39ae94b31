"""`kubegpu defrag --cluster` against recorded API answers over real HTTPS on 127.0.0.1: it reads the
PodDisruptionBudgets and PriorityClasses with the nodes and pods, sends only GET requests, and plans as it
does from the same objects in files."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kubegpu.cli.main import app
from tests.live.conftest import TOKEN, https_api, tls_kubeconfig
from tests.paths import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "defrag"
ROUTES = {
    "/api/v1/nodes": "nodes.json",
    "/api/v1/pods": "pods.json",
    "/apis/policy/v1/poddisruptionbudgets": "pdb.json",
    "/apis/scheduling.k8s.io/v1/priorityclasses": "priorityclasses.json",
}


def test_cluster_plan_equals_the_snapshot_plan(tmp_path: Path) -> None:
    with https_api(tmp_path) as (server, ca):
        for path, name in ROUTES.items():
            body = json.loads((FIXTURE / name).read_text())
            server.expect_request(path, headers={"Authorization": f"Bearer {TOKEN}"}).respond_with_json(body)
        kubeconfig = tls_kubeconfig(tmp_path / "kubeconfig", server.url_for("/").rstrip("/"), ca.read_bytes())
        live = CliRunner().invoke(
            app, ["defrag", "--cluster", "--kubeconfig", str(kubeconfig), "--for", "ml/train-0", "-o", "json"]
        )
        methods = {request.method for request, _ in server.log}
        paths = {request.path for request, _ in server.log}
    assert live.exit_code == 0, live.output
    assert methods == {"GET"}
    assert set(ROUTES) <= paths
    files = CliRunner().invoke(app, ["defrag", "--snapshot", str(FIXTURE), "--for", "ml/train-0", "-o", "json"])
    live_plan, file_plan = json.loads(live.stdout), json.loads(files.stdout)
    assert live_plan["evictions"] == file_plan["evictions"] and len(live_plan["evictions"]) == 3
    assert live_plan["placements"] == file_plan["placements"]
    assert any(k["reason"].startswith("refused by the eviction API") for k in live_plan["kept"])
