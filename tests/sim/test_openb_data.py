"""The openb trace that ships with kubegpu: complete, checked on read, the same bytes as the published trace."""

from __future__ import annotations

import hashlib
import lzma
import shutil
from pathlib import Path

import pytest

from kubegpu.errors import InputError
from kubegpu.sim.traces.files import CHECKSUMS, plain_name, read_text
from kubegpu.sim.traces.openb import (
    BUNDLED_DIR,
    ENV_VAR,
    default_openb_dir,
    node_list,
    published_file,
    read_nodes,
    read_pods,
    variant_files,
)
from tests.paths import SHARED_DIR

LISTED = dict(reversed(line.split("  ", 1)) for line in (BUNDLED_DIR / CHECKSUMS).read_text().splitlines())


def test_every_shipped_file_is_listed_and_nothing_else_ships() -> None:
    shipped = {plain_name(p) for p in BUNDLED_DIR.glob("*.xz")}
    assert shipped == set(LISTED)
    assert {p.name for p in BUNDLED_DIR.iterdir()} == {f"{n}.xz" for n in LISTED} | {CHECKSUMS, "README.md"}


def test_compressed_trace_stays_small() -> None:
    total = sum(p.stat().st_size for p in BUNDLED_DIR.glob("*.xz"))
    assert total < 3_000_000, total


@pytest.mark.parametrize("name", sorted(LISTED))
def test_each_file_decompresses_to_its_listed_digest(name: str) -> None:
    text = read_text(BUNDLED_DIR / f"{name}.xz")
    assert hashlib.sha256(text.encode()).hexdigest() == LISTED[name]


@pytest.mark.skipif(not (SHARED_DIR / "data" / "openb").is_dir(), reason="../shared/data/openb is absent")
def test_shipped_files_are_the_published_bytes() -> None:
    source = SHARED_DIR / "data" / "openb"
    for name, digest in LISTED.items():
        original = source / name if (source / name).is_file() else source / "fgd_expected_results" / name
        assert hashlib.sha256(original.read_bytes()).hexdigest() == digest, name


def test_the_fgd_cluster_and_every_variant_read() -> None:
    nodes = read_nodes(node_list(BUNDLED_DIR))
    assert len(nodes) == 1213 and sum(n.gpu_count for n in nodes) == 6212
    variants = variant_files(BUNDLED_DIR)
    assert len(variants) == 24 and len(read_pods(variants["default"])) == 8152
    assert published_file(BUNDLED_DIR) == BUNDLED_DIR / "analysis_allo_discrete.csv.xz"


def test_a_changed_file_is_refused(tmp_path: Path) -> None:
    shutil.copy(BUNDLED_DIR / CHECKSUMS, tmp_path / CHECKSUMS)
    name = "openb_pod_list_multigpu20.csv"
    text = read_text(BUNDLED_DIR / f"{name}.xz").replace("openb-pod-0000,", "openb-pod-0000x,", 1)
    (tmp_path / f"{name}.xz").write_bytes(lzma.compress(text.encode()))
    with pytest.raises(InputError, match="does not match its sha256") as err:
        read_pods(tmp_path / f"{name}.xz")
    assert err.value.file == str(tmp_path / f"{name}.xz")


def test_a_truncated_file_is_one_input_error(tmp_path: Path) -> None:
    packed = (BUNDLED_DIR / "openb_node_list_gpu_node.csv.xz").read_bytes()
    (tmp_path / "openb_node_list_gpu_node.csv.xz").write_bytes(packed[: len(packed) // 2])
    with pytest.raises(InputError, match="cannot decompress"):
        read_nodes(tmp_path / "openb_node_list_gpu_node.csv.xz")


def test_a_plain_folder_still_reads(tmp_path: Path) -> None:
    # a downloaded copy of the trace (plain CSVs, fgd_expected_results/ beside them) works with --data
    (tmp_path / "fgd_expected_results").mkdir()
    for name in ("openb_node_list_gpu_node.csv", "openb_pod_list_default.csv"):
        (tmp_path / name).write_text(read_text(BUNDLED_DIR / f"{name}.xz"))
    published = tmp_path / "fgd_expected_results" / "analysis_allo_discrete.csv"
    published.write_text(read_text(BUNDLED_DIR / "analysis_allo_discrete.csv.xz"))
    assert node_list(tmp_path) == tmp_path / "openb_node_list_gpu_node.csv"
    assert set(variant_files(tmp_path)) == {"default"}
    assert published_file(tmp_path) == published


def test_the_environment_overrides_the_shipped_trace(tmp_path: Path) -> None:
    assert default_openb_dir({}) == BUNDLED_DIR
    assert default_openb_dir({ENV_VAR: str(tmp_path)}) == tmp_path
