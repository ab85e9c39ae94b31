"""Which kustomizations a run builds (each once: bases through their overlays), and kustomize's errors as users
read them (the whole cause, no kubegpu temporary path)."""

from __future__ import annotations

from pathlib import Path

from kubegpu.manifests.render import kustomize_error
from kubegpu.manifests.render_plan import plan_renders
from kubegpu.manifests.roots import Root


def _k(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kustomization.yaml").write_text(body)
    return folder.resolve()


def test_bases_are_read_through_overlays_and_orphans_are_built_after_a_failure(tmp_path: Path) -> None:
    base = _k(tmp_path / "base", "resources: [a.yaml]\n")
    comp = _k(tmp_path / "comp", "kind: Component\n")
    one = _k(tmp_path / "one", "resources: [../base]\ncomponents: [../comp]\n")
    two = _k(tmp_path / "two", "resources:\n- ../base\n- https://example.com/remote.yaml\n")
    alone = _k(tmp_path / "alone", "resources: [x.yaml]\n")
    plan = plan_renders([base, comp, one, two, alone], lambda _f: Root(tmp_path.resolve()), 1 << 20)
    assert plan.builds() == [one, two, alone]
    assert plan.through([one, two, alone]) == {base: [one, two], comp: [one]}
    # `one` failed, `two` built: the base came through `two`; the component only `one` had is built itself
    assert plan.orphaned({two, alone}, {one}) == [comp]
    assert plan.orphaned({alone}, {one, two}) == [base, comp]


def test_a_cycle_is_built_once_and_outside_the_root_is_not_read(tmp_path: Path) -> None:
    a = _k(tmp_path / "repo" / "a", "resources: [../b]\n")
    b = _k(tmp_path / "repo" / "b", "resources: [../a]\n")
    outside = _k(tmp_path / "elsewhere", "resources: [../repo/a]\n")
    c = _k(tmp_path / "repo" / "c", "resources: [../../elsewhere]\n")
    plan = plan_renders([a, b, c], lambda _f: Root((tmp_path / "repo").resolve()), 1 << 20)
    assert plan.builds() == [a, c]
    assert outside not in plan.includes  # never read: it lies outside the root
    assert plan.includes[c] == ()


def test_kustomize_errors_keep_their_cause_and_name_the_users_folder(tmp_path: Path) -> None:
    workdir = tmp_path / "kubegpu-kustomize-x1" / "build"
    folder = tmp_path / "repo" / "overlay"
    target = "../../repo/overlay"
    block = (
        'E1206 21:08:09.862388   18057 run.go:72] "command failed" err=<\n'
        f"\taccumulating resources: accumulation err='accumulating resources from '{target}': "
        f"'{folder}' must resolve to a file': recursed accumulation of path '{folder}': trouble configuring\n"
        "\tbuiltin PatchTransformer: failed to get the patch file from path(p.yaml): no such file or directory\n >\n"
    )
    message = kustomize_error(block, folder, workdir, target)
    assert message.startswith("recursed accumulation of path '")
    assert message.endswith(
        "trouble configuring builtin PatchTransformer: failed to get the patch file from "
        "path(p.yaml): no such file or directory"
    )
    quoted = (
        'E1207 00:24:08.218388   28106 run.go:72] "command failed" err="accumulating resources: '
        f'accumulating resources from \'{workdir}/missing.yaml\': \\"quoted\\" cause"\n'
    )
    message = kustomize_error(quoted, folder, workdir, target)
    assert "kubegpu-kustomize" not in message and '"quoted" cause' in message and "E1207" not in message
    assert kustomize_error("Error: plain kustomize says this\n", folder, workdir, target) == "plain kustomize says this"
