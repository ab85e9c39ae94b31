"""`kubegpu fix` end to end: in-place atomic writes (mode kept, no temp files), --diff, --check, stdin/stdout,
broken files left untouched with exit 2, and --queue/--topology-level reaching the rules that take them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kubegpu.cli.fix import rule_options
from kubegpu.cli.main import app
from kubegpu.errors import ConfigError
from kubegpu.lint import Rule, Severity, Target
from kubegpu.rules.gang import QUEUE
from kubegpu.rules.placement import TOPOLOGY_LEVEL
from tests.fix.helpers import FIXTURES

SELECT = ["--select", "KG1", "--select", "KG2"]
BEFORE = (FIXTURES / "comments-everywhere" / "before" / "deployment.yaml").read_text()
AFTER = (FIXTURES / "comments-everywhere" / "after" / "deployment.yaml").read_text()


def _write(tmp_path: Path, name: str, text: str, mode: int = 0o640) -> Path:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(mode)
    return path


def test_fix_writes_in_place_keeping_mode(tmp_path: Path) -> None:
    path = _write(tmp_path, "d.yaml", BEFORE, 0o600)
    result = CliRunner().invoke(app, ["fix", *SELECT, str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_text() == AFTER
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["d.yaml"]
    assert "KG201 dshm-missing" in result.output


def test_check_and_diff_write_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path, "d.yaml", BEFORE)
    check = CliRunner().invoke(app, ["fix", *SELECT, "--check", str(path)])
    assert check.exit_code == 1
    diff = CliRunner().invoke(app, ["fix", *SELECT, "--diff", str(path)])
    assert "+      volumes:" in diff.stdout
    assert diff.stdout.startswith("--- a/")
    assert diff.exit_code == 1
    assert path.read_text() == BEFORE
    CliRunner().invoke(app, ["fix", *SELECT, str(path)])
    assert CliRunner().invoke(app, ["fix", *SELECT, "--check", str(path)]).exit_code == 0


def test_stdin_to_stdout() -> None:
    result = CliRunner().invoke(app, ["fix", *SELECT, "-"], input=BEFORE)
    assert result.exit_code == 0
    assert result.stdout == AFTER


def test_unparsable_file_is_left_untouched(tmp_path: Path) -> None:
    broken = "apiVersion: v1\nkind: Pod\nspec: [unclosed\n"
    path = _write(tmp_path, "bad.yaml", broken)
    good = _write(tmp_path, "good.yaml", BEFORE)
    result = CliRunner().invoke(app, ["fix", *SELECT, str(tmp_path)])
    assert result.exit_code == 2
    assert path.read_text() == broken
    assert good.read_text() == AFTER
    assert "bad.yaml: not fixed" in result.output


def test_bom_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + BEFORE.encode())
    CliRunner().invoke(app, ["fix", *SELECT, str(path)])
    assert path.read_bytes() == b"\xef\xbb\xbf" + AFTER.encode()


def test_unsafe_fixes_are_withheld_by_default(tmp_path: Path) -> None:
    source = FIXTURES / "unsafe-cpu-rounding" / "before" / "job.yaml"
    path = _write(tmp_path, "job.yaml", source.read_text())
    result = CliRunner().invoke(app, ["fix", *SELECT, str(path)])
    assert path.read_text() == source.read_text()
    assert "use --unsafe-fixes" in result.output
    assert result.exit_code == 1
    CliRunner().invoke(app, ["fix", *SELECT, "--unsafe-fixes", str(path)])
    assert path.read_text() == (FIXTURES / "unsafe-cpu-rounding" / "after" / "job.yaml").read_text()


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["fix", *SELECT, str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2


def test_queue_and_topology_options_reach_rules_that_declare_them() -> None:
    rule = Rule(
        code="KG999",
        name="gang-missing",
        practice="gang scheduling",
        severity=Severity.WARNING,
        summary="s",
        target=Target.TEMPLATE,
        check=None,
        rationale="r",
        options=(QUEUE, TOPOLOGY_LEVEL),
    )
    other = Rule(
        code="KG998",
        name="other",
        practice="gang scheduling",
        severity=Severity.WARNING,
        summary="s",
        target=Target.TEMPLATE,
        check=None,
        rationale="r",
    )
    assert rule_options([rule, other], "team-a", "rack") == {
        "gang-missing": {"queue": "team-a", "topology-level": "rack"}
    }
    assert rule_options([rule], None, None) == {}
    with pytest.raises(ConfigError, match=r'--queue: expected a LocalQueue name.*got "Team A"'):
        rule_options([rule], "Team A", None)
    with pytest.raises(ConfigError, match=r'--topology-level: expected a node label key.*got "a/b/c"'):
        rule_options([rule], None, "a/b/c")


def test_suppressed_findings_are_not_fixed(tmp_path: Path) -> None:
    text = BEFORE.replace(
        "  name: vllm\n",
        '  name: vllm\n  annotations:\n    kubegpu.io/ignore: "dshm-missing: the server uses no shared memory"\n',
        1,
    )
    path = _write(tmp_path, "d.yaml", text)
    CliRunner().invoke(app, ["fix", *SELECT, str(path)])
    assert path.read_text() == text


def test_a_named_symlink_is_refused_and_a_folder_s_link_fixes_its_target(tmp_path: Path) -> None:
    """fix never writes through a link: a link named on the command line is refused (it may lead anywhere); a
    link found in a folder to a file of that folder stands for that file, fixed once under its own name."""
    target = _write(tmp_path, "real.yaml", BEFORE)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    named = CliRunner().invoke(app, ["fix", *SELECT, str(link)])
    assert named.exit_code == 2 and "link.yaml: not fixed: is a symbolic link" in named.output
    assert link.is_symlink() and target.read_text() == BEFORE
    folder = CliRunner().invoke(app, ["fix", *SELECT, str(tmp_path)])
    assert folder.exit_code == 0, folder.output
    assert link.is_symlink() and target.read_text() == AFTER
    assert folder.output.count("real.yaml: fixed:") == 1 and "link.yaml" not in folder.output
