"""Which files a directory walk yields: each file once, whatever links point at it."""

from __future__ import annotations

from pathlib import Path

from kubegpu.manifests import discover
from kubegpu.manifests.sources import WalkReport

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n"


def test_a_file_and_links_to_it_are_read_once(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "pod.yaml").write_text(POD)
    (tmp_path / "a" / "same.yaml").symlink_to("pod.yaml")
    (tmp_path / "b" / "other.yaml").symlink_to(tmp_path / "a" / "pod.yaml")
    (tmp_path / "b" / "own.yaml").write_text(POD)
    found = [name for name, _path, _kind in discover([str(tmp_path)])]
    assert found == [str(tmp_path / "a" / "pod.yaml"), str(tmp_path / "b" / "own.yaml")]


def test_a_link_to_a_file_outside_is_not_read_and_is_reported(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(POD)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "link.yaml").symlink_to(outside)
    (tmp_path / "repo" / "inside.yaml").symlink_to("own.yaml")
    (tmp_path / "repo" / "own.yaml").write_text(POD)
    report = WalkReport()
    found = [name for name, _path, _kind in discover([str(tmp_path / "repo")], report=report)]
    assert found == [str(tmp_path / "repo" / "inside.yaml")]  # a link inside the root is read, once
    assert [(name, what) for name, _reason, what in report.skipped] == [(str(tmp_path / "repo" / "link.yaml"), "link")]
    assert "1 symbolic link was not followed" in report.notices[0]
