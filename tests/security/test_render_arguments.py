"""Code execution through helm's arguments: what a repository names (chart folders, its kubegpu.toml) reaches helm
and kustomize only as data, after `--` or inside one `--flag=value` argument, never as a flag or a program."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.security.render_fixtures import (
    SECRET,
    SECRET_ENV,
    chart,
    counting_server,
    fake_helm,
    kubeconfig,
    lint,
    records,
    require,
    tools_env,
)
from tests.security.render_fixtures import LoopbackServer as _Server

__all__ = ["counting_server"]  # the fixture, used by name

FLAG_FOLDERS = ("--post-renderer=sh", "--validate", "--dry-run=server", "-x", "release-name")


def test_flag_named_chart_folders_are_rendered_as_charts(tmp_path: Path, counting_server: _Server) -> None:
    """The reproducer: `--post-renderer=sh/` next to `release-name/`, each a chart whose template holds
    `$(touch PWNED)`, used to make helm pipe a chart into sh; `--validate` and `--dry-run=server` would make it
    call the API server of the caller's kubeconfig. With the real helm every folder renders as a chart (helm v4
    takes `--` before its positional arguments), nothing runs and nothing is contacted."""
    helm = require("helm")
    repo = tmp_path / "repo"
    for name in FLAG_FOLDERS:
        chart(repo / name)
    env = {**tools_env(helm), "KUBECONFIG": str(kubeconfig(tmp_path, counting_server))}
    done = lint([".", "-o", "json"], repo, env)
    assert done.code == 0, done.text
    summary = json.loads(done.out)["summary"]
    assert (summary["files"], summary["documents"], summary["notices"]) == (len(FLAG_FOLDERS), len(FLAG_FOLDERS), [])
    assert not list(tmp_path.rglob("PWNED"))
    assert counting_server.connections == 0


def test_helm_is_given_flags_as_one_argument_each_and_positionals_after_dashes(tmp_path: Path) -> None:
    bin_dir, record = fake_helm(tmp_path)
    repo = tmp_path / "repo"
    for name in FLAG_FOLDERS:
        chart(repo / name)
    (repo / "values.yaml").write_text("a: 1\n")
    (repo / "kubegpu.toml").write_text(
        '[helm]\nvalues = ["values.yaml"]\nset = ["--post-renderer=sh", "a=b"]\nrelease = "r1"\nnamespace = "ns"\n'
    )
    done = lint([".", "-o", "json"], repo, {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert done.code == 0, done.text
    runs = records(record)
    assert len(runs) == len(FLAG_FOLDERS)
    for args, env in runs:
        assert args[0] == "template"
        dashes = args.index("--")
        assert all(a.startswith("--") and "=" in a for a in args[1:dashes]), args
        assert "--set=--post-renderer=sh" in args and f"--values={(repo / 'values.yaml').resolve()}" in args
        release, folder = args[dashes + 1 :]
        assert release == "r1"
        assert os.path.isabs(folder) and not Path(folder).is_relative_to(repo)  # a private copy, gone now
        # the minimal environment: nothing of the caller's
        assert not set(SECRET_ENV) & set(env) and SECRET not in "".join(env.values())
        assert env["PATH"] == "" and env["KUBECONFIG"] == os.devnull
        assert env["HOME"] != os.environ.get("HOME") and Path(env["HELM_PLUGINS"]).is_relative_to(env["HOME"])
        assert env["HTTPS_PROXY"].startswith("http://127.0.0.1:")


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ('release = "--post-renderer=sh"', "'release': '--post-renderer=sh' is not a release name"),
        ('release = "a b"', "is not a release name"),
        ('namespace = "--kube-apiserver=x"', "is not a namespace name"),
        ('set = ["--post-renderer"]', "is not a key=value pair"),
        ('set = ["a=1\\n--post-renderer=sh"]', "is not a key=value pair on one line"),
        ('values = ["/proc/self/environ"]', "'/proc/self/environ' leads outside"),
        ('values = ["../outside.yaml"]', "'../outside.yaml' leads outside"),
        ('values = ["link.yaml"]', "'link.yaml' leads outside"),
        ('values = [".git/config"]', "'.git/config' leads into .git"),
        ('post-renderer = "sh"', "unknown setting 'post-renderer'"),
    ],
)
def test_the_configuration_cannot_name_a_flag_a_program_or_a_file_outside(
    tmp_path: Path, setting: str, words: str
) -> None:
    bin_dir, record = fake_helm(tmp_path)
    repo = tmp_path / "repo"
    chart(repo / "c")
    (tmp_path / "outside.yaml").write_text(f"a: {SECRET}\n")
    (repo / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    (repo / "kubegpu.toml").write_text(f"[helm]\n{setting}\n")
    done = lint(["."], repo, {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert done.code == 2, done.text
    assert "kubegpu.toml:2: [helm]: " in done.err and words in done.err, done.err
    assert "Traceback" not in done.err and SECRET not in done.text
    assert records(record) == []  # helm never ran


def test_a_chart_table_is_checked_as_the_helm_table(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    chart(repo / "charts" / "c")
    (repo / "kubegpu.toml").write_text('[helm.charts."charts/c"]\nrelease = "-r"\n')
    done = lint(["."], repo)
    assert done.code == 2 and "kubegpu.toml:2: [helm.charts.'charts/c']: 'release'" in done.err, done.err


@pytest.mark.parametrize("name", ["--enable-helm", "--load-restrictor=LoadRestrictionsNone", "-o"])
def test_flag_named_kustomization_folders_are_built_as_kustomizations(tmp_path: Path, name: str) -> None:
    """kubectl kustomize gets `--` and its own temporary folder; the user's folder is a quoted resource in it."""
    kubectl = require("kustomize", "kubectl")
    folder = tmp_path / "repo" / name
    folder.mkdir(parents=True)
    (folder / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (folder / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    done = lint([".", "-o", "json"], tmp_path / "repo", tools_env(kubectl))
    assert done.code == 0, done.text
    summary = json.loads(done.out)["summary"]
    assert (summary["documents"], summary["notices"]) == (1, [])


def test_the_configuration_cannot_lift_the_size_limit(tmp_path: Path) -> None:
    """max-file-size also bounds what a render may print: a repository's file may not raise it past 64 MiB (the
    command line may)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pod.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (repo / "kubegpu.toml").write_text("max-file-size = 1073741824\n")
    done = lint(["."], repo)
    assert done.code == 2 and "kubegpu.toml:1: 'max-file-size' is at most 67108864 bytes" in done.err, done.err
    assert lint([".", "--config", str(repo / "kubegpu.toml"), "--max-file-size", "1073741824"], repo).code == 2
    (repo / "kubegpu.toml").write_text("max-file-size = 1048576\n")
    assert lint([".", "--max-file-size", "1073741824"], repo).code == 0


def test_a_huge_or_special_configuration_file_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pod.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (repo / "kubegpu.toml").write_text("# padding\n" * 500_000)
    done = lint(["."], repo)
    assert done.code == 2 and "kubegpu.toml" in done.err and "limit" in done.err, done.err
    (repo / "kubegpu.toml").unlink()
    (repo / "pyproject.toml").symlink_to("/dev/zero")
    assert lint(["."], repo).code == 0  # not a regular file: not a configuration
