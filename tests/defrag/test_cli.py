"""`kubegpu defrag` and `kubegpu audit --plot` on the fixture snapshot: text, JSON, Eviction objects valid
against the Kubernetes schema, the maps, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.generate.validate import validate_object
from tests.paths import REPO_ROOT

FIXTURE = str(REPO_ROOT / "tests" / "fixtures" / "defrag")
PNG = b"\x89PNG\r\n\x1a\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def test_text_plan_names_each_eviction_and_why_pods_stay() -> None:
    code, out, _ = run("defrag", "--snapshot", FIXTURE, "--for", "ml/train-0")
    assert code == 0
    assert "plan: evict 3 pods, the fewest possible" in out
    assert "then the waiting pods run on:" in out
    assert "8  a DaemonSet's pod" in out and "3  refused by the eviction API (PodDisruptionBudget)" in out
    assert "ml/infer-0-" not in out.split("then the waiting")[0]  # the budget keeps gpu-0's pods


def test_json_plan() -> None:
    code, out, _ = run("defrag", "--snapshot", FIXTURE, "--gang", "2x8", "-o", "json")
    assert code == 0
    data = json.loads(out)
    assert data["found"] and data["optimal"] and data["gap"] == 0 and len(data["evictions"]) == 6
    assert {e["node"] for e in data["evictions"]} == {p["node"] for p in data["placements"]}
    assert all(e["placed_on"] for e in data["evictions"])


def test_eviction_objects_are_valid() -> None:
    code, out, _ = run("defrag", "--snapshot", FIXTURE, "--for", "ml/train-0", "-o", "yaml", "--validate")
    assert code == 0
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert len(docs) == 3
    for doc in docs:
        assert doc["apiVersion"] == "policy/v1" and doc["kind"] == "Eviction"
        assert doc["deleteOptions"]["preconditions"]["uid"] == f"uid-ml-{doc['metadata']['name']}"
        validate_object(doc)


def test_no_plan_exits_one() -> None:
    code, out, _ = run("defrag", "--snapshot", FIXTURE, "--gang", "8x8")
    assert code == 1 and "no plan" in out


def test_maps_are_written(tmp_path: Path) -> None:
    target = tmp_path / "plan.png"
    code, _, _ = run("defrag", "--snapshot", FIXTURE, "--for", "ml/train-0", "--plot", str(target))
    assert code == 0 and target.read_bytes().startswith(PNG)
    audit_map = tmp_path / "audit.png"
    code, _, _ = run("audit", "--snapshot", FIXTURE, "--plot", str(audit_map))
    assert code == 0 and audit_map.read_bytes().startswith(PNG)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--for", "ml/train-0", "--gang", "2x8"], "exactly one of --for"),
        ([], "exactly one of --for"),
        (["--gang", "2by8"], "--gang '2by8'"),
        (["--for", "ml/missing"], "no such pod"),
        (["--for", "ml/infer-1-0"], "not waiting"),
        (["--gang", "1x8", "--cpu", "lots"], "--cpu 'lots'"),
        (["--gang", "1x8", "--priority-class", "nope"], "no such PriorityClass"),
        (["--for", "ml/train-0", "--plot", "/nonexistent-folder/map.png"], "cannot write the map"),
    ],
)
def test_errors_are_one_line(args: list[str], message: str) -> None:
    code, out, err = run("defrag", "--snapshot", FIXTURE, *args)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_hostile_names_stay_on_their_line(tmp_path: Path) -> None:
    objects = json.loads((REPO_ROOT / "tests" / "fixtures" / "defrag" / "pods.json").read_text())
    for item in objects["items"]:
        if item["metadata"]["name"].startswith("infer-"):
            item["metadata"]["name"] += "\n::error::x\nkind: Secret"
    folder = tmp_path / "snap"
    folder.mkdir()
    for name in ("nodes.json", "pdb.json", "priorityclasses.json"):
        (folder / name).write_text((REPO_ROOT / "tests" / "fixtures" / "defrag" / name).read_text())
    (folder / "pods.json").write_text(json.dumps(objects))
    code, out, _ = run("defrag", "--snapshot", str(folder), "--for", "ml/train-0")
    assert code == 0 and not any(line.startswith(("::", "kind:")) for line in out.splitlines())
    code, out, _ = run("defrag", "--snapshot", str(folder), "--for", "ml/train-0", "-o", "yaml")
    assert code == 0
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert len(docs) == 3 and all(d["kind"] == "Eviction" for d in docs)
    assert all(d["metadata"]["name"].endswith("\n::error::x\nkind: Secret") for d in docs)
