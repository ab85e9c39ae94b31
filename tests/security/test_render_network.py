"""Renderers stay offline: remote kustomize resources are refused (a notice naming the file and line) unless
--allow-remote; helm fetches no dependency; a server that never answers costs at most the render limits."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.security.render_fixtures import (
    SECRET,
    LoopbackServer,
    chart,
    counting_server,
    kubeconfig,
    lint,
    require,
    silent_server,
    tools_env,
)

__all__ = ["counting_server", "silent_server"]  # fixtures, used by name

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local}\n"


def _remote_forms(server: LoopbackServer) -> list[str]:
    return [
        f"http://{server.address}/cm.yaml",
        f"https://{server.address}/cm.yaml",
        f"git::http://{server.address}/org/repo.git",
        f"{server.address}/org/repo//base?ref=main",
        "github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1",
        "https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v3.3.1",
        "git@github.com:kubernetes-sigs/kustomize.git",
        "ssh://git@github.com/kubernetes-sigs/kustomize.git",
    ]


def _kustomization(folder: Path, field: str, entry: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "cm.yaml").write_text(CM)
    (folder / "kustomization.yaml").write_text(f"# a comment first\n{field}:\n- cm.yaml\n- {entry}\n")
    return folder


@pytest.mark.parametrize(
    ("form", "field"), [*((form, "resources") for form in range(8)), (0, "components"), (6, "bases")]
)
def test_remote_resources_are_refused_with_a_notice_naming_file_and_line(
    tmp_path: Path, counting_server: LoopbackServer, form: int, field: str
) -> None:
    kubectl = require("kustomize", "kubectl")
    entry = _remote_forms(counting_server)[form]
    _kustomization(tmp_path / "repo" / "overlay", field, entry)
    done = lint([".", "-o", "json"], tmp_path / "repo", tools_env(kubectl))
    assert done.code == 0, done.text
    notices = json.loads(done.out)["summary"]["notices"]
    assert len(notices) == 1
    assert notices[0].startswith(f"kustomization overlay: not rendered: overlay/kustomization.yaml:4: {field} names")
    assert entry in notices[0] and "--allow-remote" in notices[0]
    assert counting_server.connections == 0


def test_allow_remote_fetches_what_is_refused_without_it(tmp_path: Path, counting_server: LoopbackServer) -> None:
    """The server does see a fetch when one is allowed: the test above would see one too."""
    kubectl = require("kustomize", "kubectl")
    _kustomization(tmp_path / "repo" / "overlay", "resources", f"http://{counting_server.address}/cm.yaml")
    done = lint([".", "-o", "json", "--allow-remote"], tmp_path / "repo", tools_env(kubectl))
    assert done.code == 0, done.text
    assert json.loads(done.out)["summary"]["documents"] == 2
    assert counting_server.connections >= 1


def test_a_server_that_never_answers_costs_at_most_the_limits(tmp_path: Path, silent_server: LoopbackServer) -> None:
    """Each render stops at --render-timeout; once --render-deadline has passed, the rest are not started: each
    says which limit stopped it, and the run ends."""
    kubectl = require("kustomize", "kubectl")
    for i in range(6):
        _kustomization(tmp_path / "repo" / f"o{i}", "resources", f"http://{silent_server.address}/{i}.yaml")
    args = [".", "-o", "json", "--allow-remote", "--render-timeout", "1", "--render-deadline", "2.5", "--jobs", "1"]
    done = lint(args, tmp_path / "repo", tools_env(kubectl))
    assert done.code == 2, done.text
    messages = [f["message"] for f in json.loads(done.out)["findings"]]
    assert len(messages) == 6
    assert "kubectl did not finish within 1 s (--render-timeout)" in messages[0]
    assert any("--render-deadline" in m and "not rendered" in m for m in messages[3:])
    assert silent_server.connections <= 3


def test_renders_at_once_keep_the_timeout_and_the_deadline(tmp_path: Path, silent_server: LoopbackServer) -> None:
    """Three renders at a time (--jobs 3): each still stops at --render-timeout, none starts after
    --render-deadline, and the run's renders end within the deadline and one timeout."""
    kubectl = require("kustomize", "kubectl")
    for i in range(9):
        _kustomization(tmp_path / "repo" / f"o{i}", "resources", f"http://{silent_server.address}/{i}.yaml")
    args = [".", "-o", "json", "--allow-remote", "--render-timeout", "1", "--render-deadline", "1.5", "--jobs", "3"]
    started = time.monotonic()
    done = lint(args, tmp_path / "repo", tools_env(kubectl))
    took = time.monotonic() - started
    assert done.code == 2, done.text
    messages = [f["message"] for f in json.loads(done.out)["findings"]]
    assert len(messages) == 9
    assert sum("within 1 s (--render-timeout)" in m for m in messages) >= 3
    assert any("--render-deadline" in m and "not rendered" in m for m in messages)
    assert all("--render-timeout" in m or "--render-deadline" in m for m in messages)
    assert silent_server.connections <= 6
    assert took < 1.5 + 1 + 15  # the renders' limits, and the start and lint of a run on a loaded machine


def test_without_allow_remote_a_silent_server_is_never_reached(tmp_path: Path, silent_server: LoopbackServer) -> None:
    kubectl = require("kustomize", "kubectl")
    for i in range(3):
        _kustomization(tmp_path / "repo" / f"o{i}", "resources", f"http://{silent_server.address}/{i}.yaml")
    done = lint([".", "-o", "json"], tmp_path / "repo", tools_env(kubectl))
    assert done.code == 0 and len(json.loads(done.out)["summary"]["notices"]) == 3, done.text
    assert silent_server.connections == 0


def test_helm_fetches_no_dependency_and_reaches_no_cluster(tmp_path: Path, counting_server: LoopbackServer) -> None:
    """A chart whose dependency lives on a chart repository at the server, whose templates `lookup` cluster objects,
    with the caller's kubeconfig pointing at the server: a notice to build the dependencies, nothing contacted."""
    helm = require("helm")
    folder = chart(
        tmp_path / "repo" / "app",
        '{{- $s := lookup "v1" "Secret" "default" "x" }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n'
        "data: {found: {{ $s | toJson | quote }}}\n",
    )
    (folder / "Chart.yaml").write_text(
        "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n"
        f"- name: dep\n  version: 1.0.0\n  repository: http://{counting_server.address}/charts\n"
    )
    lookup = chart(
        tmp_path / "repo" / "lookup",
        '{{- $s := lookup "v1" "Secret" "default" "x" }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n'
        "data: {found: {{ $s | toJson | quote }}}\n",
    )
    env = {**tools_env(helm), "KUBECONFIG": str(kubeconfig(tmp_path, counting_server))}
    done = lint([".", "-o", "json"], tmp_path / "repo", env)
    assert done.code == 0, done.text
    summary = json.loads(done.out)["summary"]
    assert summary["documents"] == 1 and lookup.is_dir()
    assert len(summary["notices"]) == 1 and "helm dependency build" in summary["notices"][0]
    assert counting_server.connections == 0 and SECRET not in done.text
