"""The .gitignore matcher: pathspec's GitIgnoreSpec answers on ordinary patterns, git's own on the cases where
pathspec strays from git, and no pattern (backtracking bait, invalid ranges) can stall or crash a lint run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pathspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.manifests.gitignore import IgnoreRules

# Pieces of patterns and path segments, small enough that pathspec's backtracking regexes answer at once.
_ATOMS = ("a", "b", "ab", "*", "?", "**", "[ab]", "[a-c]", "[]a]", "\\*", "\\!", "#", " ", "\\ ", ".")
_SEGMENTS = ("a", "b", "ab", "ba", "c", "aab", "*", "bb", ".a", "a b", "#a")

segment_globs = st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=3).map("".join)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    line = "/".join(draw(st.lists(segment_globs, min_size=1, max_size=4)))
    if draw(st.booleans()):
        line = "/" + line
    if draw(st.booleans()):
        line += "/"
    if draw(st.booleans()):
        line = "!" + line
    return line


@st.composite
def paths(draw: st.DrawFn) -> str:
    path = "/".join(draw(st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=6)))
    return path + "/" if draw(st.booleans()) else path


@given(st.lists(patterns(), min_size=1, max_size=4), paths())
def test_it_answers_as_pathspec_does(lines: list[str], path: str) -> None:
    try:
        expected = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple").match_file(path)
    except ValueError:  # pathspec refuses the line (a trailing backslash); git and we leave it out
        return
    assert IgnoreRules.from_lines(lines).match_file(path) == expected


@pytest.mark.parametrize(
    ("lines", "path", "ignored"),
    [
        (["*.log"], "a/b/x.log", True),
        (["build/"], "build", False),  # a folder pattern does not match a file of that name
        (["build/"], "build/", True),
        (["build/"], "src/build/out.yaml", True),
        (["/build"], "src/build", False),
        (["deploy/**/gen-*.yaml"], "deploy/a/b/gen-1.yaml", True),
        (["deploy/**/gen-*.yaml"], "deploy/gen-1.yaml", True),
        (["*", "!keep.yaml"], "keep.yaml", False),
        (["secrets/", "!secrets/ok.yaml"], "secrets/ok.yaml", False),
        (["a*a*a*a*a*a*a*a*a*a*a*a*b"], "a" * 4000, False),
        (["a*a*a*a*a*a*a*a*a*a*a*a*b"], "a" * 400 + "b", True),
        (["[z-a]", "ok"], "ok", True),  # an invalid range is left out, the rest still read
        (["[z-a]"], "z", False),
        (["a\\"], "a", False),  # an escape with nothing after it: left out
        (["a[!x]b"], "a/b", False),  # a bracket never matches `/` (pathspec says True, git says False)
    ],
)
def test_cases(lines: list[str], path: str, ignored: bool) -> None:
    assert IgnoreRules.from_lines(lines).match_file(path) is ignored


def test_a_negated_bracket_follows_git_where_pathspec_does_not(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    (tmp_path / ".gitignore").write_text("a[!x]b\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").write_text("")
    subprocess.run([git, "init", "-q", "--", str(tmp_path)], check=True)
    answer = subprocess.run([git, "-C", str(tmp_path), "check-ignore", "-q", "--", "a/b"], check=False)
    assert answer.returncode == 1  # git: not ignored
    assert pathspec.GitIgnoreSpec.from_lines(["a[!x]b"], backend="simple").match_file("a/b")
    assert not IgnoreRules.from_lines(["a[!x]b"]).match_file("a/b")


def test_the_pattern_count_is_bounded() -> None:
    rules = IgnoreRules.from_lines((f"x{i}" for i in range(50)), limit=10)
    assert rules.truncated and len(rules.patterns) == 10
    assert not IgnoreRules.from_lines(["# only a comment", "", "x"], limit=1).truncated


def _lint(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """kubegpu lint as a CI job runs it; the timeout only keeps a hang from stalling the suite."""
    return subprocess.run(
        [sys.executable, "-m", "kubegpu", "lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


POD = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def test_backtracking_bait_in_gitignore_does_not_stall_lint(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # a work tree: its .gitignore is read
    (tmp_path / ".gitignore").write_text("a*a*a*a*a*a*a*a*a*a*a*a*b\n[z-a]\na\\\n")
    (tmp_path / ("a" * 200 + ".yaml")).write_text(POD)
    deep = tmp_path.joinpath(*(["a" * 100] * 20))
    deep.mkdir(parents=True)
    (deep / ("a" * 200 + ".yaml")).write_text(POD)
    done = _lint([".", "-o", "json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"files": 2' in done.stdout
