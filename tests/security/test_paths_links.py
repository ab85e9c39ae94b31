"""Nothing outside the lint root is read: links out of it (to /proc/self/environ, to a canary file with a secret),
into .git, loops and links to nothing are skipped, counted and listed; charts and kustomizations that would read
outside are not rendered; text the repository renders cannot send a report to a file outside."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.security.render_fixtures import GPU_POD, SECRET, SECRET_ENV, chart, lint, require, tools_env

FORMATS = ("text", "json", "sarif", "junit", "github")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "creds.yaml").write_text(f"token: {SECRET}: [broken\n")
    (folder / "secret.yaml").write_text(GPU_POD.replace("name: train", f"name: {SECRET}"))
    return folder


@pytest.mark.parametrize("form", FORMATS)
def test_links_out_of_the_root_are_never_read(tmp_path: Path, outside: Path, form: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {SECRET}\n")
    (repo / "env.yaml").symlink_to("/proc/self/environ")
    (repo / "creds.yaml").symlink_to(outside / "creds.yaml")
    (repo / "secret.yaml").symlink_to(outside / "secret.yaml")
    (repo / "git.yaml").symlink_to(".git/config")
    (repo / "sub").mkdir()
    (repo / "sub" / "up.yaml").symlink_to("../../outside/secret.yaml")
    (repo / "pod.yaml").write_text(GPU_POD)
    done = lint([".", "-o", form, "--verbose"], repo)
    assert done.code == 1, done.text  # the GPU pod's findings
    assert SECRET not in done.text
    assert "5 symbolic links were not followed" in done.err
    for name in ("env.yaml", "creds.yaml", "secret.yaml", "git.yaml", "sub/up.yaml"):
        assert name in done.text  # --verbose lists each


def test_a_named_link_is_read_only_inside_its_work_tree(tmp_path: Path, outside: Path) -> None:
    """A file named on the command line (pre-commit, `git diff --name-only | xargs`) may be a link the repository
    holds: it is read when it stays in the git work tree, never when it leaves it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "base").mkdir()
    (repo / "base" / "pod.yaml").write_text(GPU_POD)
    (repo / "deploy").mkdir()
    (repo / "deploy" / "pod.yaml").symlink_to("../base/pod.yaml")
    (repo / "deploy" / "env.yaml").symlink_to("/proc/self/environ")
    (repo / "deploy" / "secret.yaml").symlink_to(outside / "secret.yaml")
    done = lint(["deploy/pod.yaml", "deploy/env.yaml", "deploy/secret.yaml", "-o", "json"], repo)
    assert done.code == 1, done.text
    report = json.loads(done.out)
    assert {f["file"] for f in report["findings"]} == {"deploy/pod.yaml"}
    assert [s["file"] for s in report["summary"]["skipped"]] == ["deploy/env.yaml", "deploy/secret.yaml"]
    assert SECRET not in done.text and not set(SECRET_ENV.values()) & set(done.text.split())


def test_only_links_out_is_no_input(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "env.yaml").symlink_to("/proc/self/environ")
    done = lint(["."], repo)
    assert done.code == 2 and "no input" in done.err and "1 symbolic link was not followed" in done.err


@pytest.mark.parametrize(
    "links",
    [
        {"x.yaml": "x.yaml"},
        {"a.yaml": "b.yaml", "b.yaml": "a.yaml"},
        {"a.yaml": "b.yaml", "b.yaml": "c.yaml", "c.yaml": "a.yaml"},
        {"dangling.yaml": "nothing.yaml"},
    ],
)
def test_link_loops_and_links_to_nothing_are_skipped_with_a_notice(tmp_path: Path, links: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pod.yaml").write_text(GPU_POD)
    for name, target in links.items():
        (repo / name).symlink_to(target)
    done = lint([".", "--exit-zero"], repo)
    assert done.code == 0, done.text  # not 3 (an internal error), as `ln -s x.yaml x.yaml` gave
    assert f"{len(links)} symbolic link" in done.err and "internal error" not in done.text
    loops = len(links) if "dangling.yaml" not in links else 0
    assert (f"{loops} of them a loop" in done.err) == bool(loops)


def test_hostile_trees_are_bounded(tmp_path: Path) -> None:
    """A tree deeper than the walk goes, and a folder that cannot be read: notices, never a crash."""
    repo = tmp_path / "repo"
    deep = repo.joinpath(*(["d"] * 140))
    deep.mkdir(parents=True)
    (deep / "pod.yaml").write_text(GPU_POD)
    (repo / "d" / "pod.yaml").write_text(GPU_POD)
    locked = repo / "locked"
    locked.mkdir()
    (locked / "pod.yaml").write_text(GPU_POD)
    locked.chmod(0)
    try:
        done = lint([".", "-o", "json", "--exit-zero"], repo)
    finally:
        locked.chmod(0o755)
    assert done.code == 0, done.text
    summary = json.loads(done.out)["summary"]
    assert summary["files"] == 1 + (1 if _readable_anyway(locked) else 0)
    assert any("nested deeper than 128 levels" in n for n in summary["notices"])


def _readable_anyway(folder: Path) -> bool:
    """root reads a folder whatever its mode."""
    import os

    return os.geteuid() == 0


def test_charts_that_would_read_outside_are_not_rendered(tmp_path: Path, outside: Path) -> None:
    helm = require("helm")
    repo = tmp_path / "repo"
    files_get = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: {{ .Files.Get "%s" | quote }}}\n'
    leaky = chart(repo / "leaky", files_get % "s.txt")
    (leaky / "s.txt").symlink_to(outside / "secret.yaml")
    linked_template = chart(repo / "linked-template")
    (linked_template / "templates" / "pod.yaml").symlink_to(outside / "secret.yaml")
    looping = chart(repo / "looping")
    (looping / "templates" / "up").symlink_to("..")
    fifo = chart(repo / "fifo")
    import os

    os.mkfifo(fifo / "templates" / "pipe.yaml")
    vcs = chart(repo / "vcs", files_get % ".git/config")
    (vcs / ".git").mkdir()
    (vcs / ".git" / "config").write_text(f"token = {SECRET}\n")
    (vcs / ".env").write_text(f"TOKEN={SECRET}\n")
    inside = chart(repo / "inside", files_get % "data/s.txt")
    (inside / "data").mkdir()
    (inside / "data" / "real.txt").write_text("kept\n")
    (inside / "data" / "s.txt").symlink_to("real.txt")
    done = lint([".", "-o", "json"], repo, tools_env(helm))
    assert done.code == 0, done.text
    report = json.loads(done.out)
    assert sorted(report["summary"]["notices"]) == [
        "chart fifo: not rendered: templates/pipe.yaml is not a regular file",
        "chart leaky: not rendered: s.txt is a symbolic link out of the chart or into a hidden or tool folder",
        "chart linked-template: not rendered: templates/pod.yaml is a symbolic link out of the chart or into a "
        "hidden or tool folder",
        "chart looping: not rendered: templates/up is a symbolic link to a folder holding it (a loop)",
    ]
    assert report["summary"]["documents"] == 2  # vcs (without its .git) and inside (its link kept)
    assert SECRET not in done.text


def test_a_template_that_names_a_file_outside_as_its_source_points_at_the_chart(tmp_path: Path, outside: Path) -> None:
    """helm's `# Source:` comments are text the chart writes: a template printing one that climbs out of the chart
    must not make the report read (and print a line of) a file outside."""
    helm = require("helm")
    repo = tmp_path / "repo"
    pod = GPU_POD.replace("apiVersion: v1\n", "# Source: c/../../outside/secret.yaml\napiVersion: v1\n", 1)
    chart(repo / "c", pod)
    done = lint(["c"], repo, tools_env(helm))
    assert done.code == 1, done.text
    assert "c/Chart.yaml" in done.out and "outside" not in done.out and SECRET not in done.text


def test_kustomizations_that_would_read_outside_are_not_built(tmp_path: Path, outside: Path) -> None:
    kubectl = require("kustomize", "kubectl")
    (outside / "kustomization.yaml").write_text("resources: [secret.yaml]\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "kustomization.yaml").write_text("resources: [config]\n")
    (repo / ".git" / "config").write_text(f"token: {SECRET}\n")
    cases = {
        "escape": "resources:\n- ../../outside\n",
        "absolute": f"resources:\n- {outside}\n",
        "linked": "resources:\n- base\n",
        "vcs": "resources:\n- ../.git\n",
        "generator": "configMapGenerator:\n- name: g\n  envs:\n  - ../../outside/creds.yaml\n",
        "patch": "resources: []\npatches:\n- path: ../../outside/secret.yaml\n",
    }
    for name, text in cases.items():
        (repo / name).mkdir()
        (repo / name / "kustomization.yaml").write_text(text)
    (repo / "linked" / "base").symlink_to(outside)
    done = lint([".", "-o", "json"], repo, tools_env(kubectl))
    assert done.code == 0, done.text
    notices = json.loads(done.out)["summary"]["notices"]
    assert len(notices) == len(cases), notices
    for notice in notices:
        assert "not rendered" in notice and "kustomization.yaml:" in notice
    assert SECRET not in done.text


def test_an_overlay_given_alone_reaches_its_base_only_through_the_work_tree(tmp_path: Path) -> None:
    """A folder given is its own root: an overlay whose base is beside it is refused, with a notice saying so,
    unless the work tree is given; pre-commit names files, whose root is the work tree."""
    kubectl = require("kustomize", "kubectl")
    repo = tmp_path / "repo"
    (repo / "base").mkdir(parents=True)
    (repo / "base" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (repo / "base" / "pod.yaml").write_text(GPU_POD)
    (repo / "overlay").mkdir()
    (repo / "overlay" / "kustomization.yaml").write_text("resources: [../base]\n")
    env = tools_env(kubectl)
    done = lint(["overlay", "-o", "json"], repo, env)
    assert done.code == 0 and "leads outside overlay/" in done.out, done.text
    assert lint([".", "-o", "json"], repo, env).code == 1  # the base's pod, through both
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    named = lint(["overlay/kustomization.yaml", "-o", "json"], repo, env)
    assert named.code == 1, named.text
    assert json.loads(named.out)["summary"]["notices"] == []


def test_origin_annotations_cannot_point_outside_the_root(tmp_path: Path, outside: Path) -> None:
    """kustomize's origin and transformer annotations are text in the build output: one naming a file outside the
    lint root (or a kustomization there whose patches would be read) is not followed."""
    from kubegpu.manifests import load_text
    from kubegpu.manifests.origins import KustomizeOrigins
    from kubegpu.manifests.roots import Root

    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "pod.yaml").write_text(GPU_POD)
    (outside / "kustomization.yaml").write_text("patches:\n- path: secret.yaml\n")
    workdir = repo / "app"
    annotations = (
        "  annotations:\n"
        "    config.kubernetes.io/origin: 'path: ../../outside/secret.yaml'\n"
        "    alpha.config.kubernetes.io/transformations: '[{configuredIn: ../../outside/kustomization.yaml,"
        " configuredBy: {kind: PatchTransformer}}]'\n"
    )
    rendered = GPU_POD.replace("metadata: {name: train}\n", "metadata:\n  name: train\n" + annotations)
    [doc] = load_text("rendered", rendered).documents
    confined = KustomizeOrigins(workdir, Root.of(repo))
    assert confined.origin_file(doc) is None and confined.pieces(doc) == []
    assert confined.locate(doc, ("spec",)) is None
    inside = rendered.replace("../../outside/secret.yaml", "pod.yaml")
    [doc] = load_text("rendered", inside).documents
    assert confined.origin_file(doc) == (workdir / "pod.yaml").resolve()


def test_the_walk_stops_after_its_bound_on_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree of more names than the walk lists (1,000,000; 50 here) is read up to the bound, with a notice."""
    from kubegpu.manifests import sources
    from kubegpu.manifests.sources import WalkReport, discover

    monkeypatch.setattr(sources, "MAX_ENTRIES", 50)
    for folder in range(10):
        (tmp_path / f"f{folder}").mkdir()
        for name in range(10):
            (tmp_path / f"f{folder}" / f"m{name}.yaml").write_text(GPU_POD)
    report = WalkReport()
    found = list(discover([str(tmp_path)], report=report))
    assert 0 < len(found) < 100
    assert report.notices == ["the walk stopped after 50 names: the rest was not read"]


def test_a_gitignore_of_too_many_patterns_is_read_in_part_with_a_notice(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text("".join(f"ignored-{i}.yaml\n" for i in range(2500)) + "late.yaml\n")
    (repo / "late.yaml").write_text(GPU_POD)
    (repo / "ignored-1.yaml").write_text(GPU_POD)
    done = lint([".", "-o", "json", "--exit-zero"], repo)
    report = json.loads(done.out)
    assert {f["file"] for f in report["findings"]} == {"late.yaml"}  # the 2,501st pattern is not read
    assert any("only the first 2000 patterns are read" in n for n in report["summary"]["notices"])
