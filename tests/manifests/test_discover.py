"""Which files a directory walk yields: each file once, whatever links point at it."""

from __future__ import annotations

from pathlib import Path

from kubegpu.manifests import discover

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


def test_a_link_to_a_file_outside_is_read_under_its_own_name(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(POD)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "link.yaml").symlink_to(outside)
    found = [name for name, _path, _kind in discover([str(tmp_path / "repo")])]
    assert found == [str(tmp_path / "repo" / "link.yaml")]
