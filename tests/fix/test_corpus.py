"""Fix every real-world manifest in ../shared/corpus/real (in memory; nothing is written there) and check that
the fix keeps its promises: safe-fixable findings are gone, comments stay, nothing else changes, it is
idempotent, and core objects that validated before (Kubernetes 1.35 schema) still validate."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kubegpu.fix import FixOptions, fix_text
from kubegpu.fix.files import decode
from kubegpu.manifests import load_text
from tests.fix.helpers import (
    CORE_GROUPS,
    comment_lines,
    inline_comments,
    linter,
    schema_errors,
    strip_paths,
    touched_by_document,
)
from tests.paths import SHARED_DIR

CORPUS = SHARED_DIR / "corpus" / "real"
FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json")) if CORPUS.is_dir() else []


def _ids(path: Path) -> str:
    return str(path.relative_to(CORPUS))


@pytest.fixture(autouse=True)
def _need_corpus(shared_dir: Path) -> None:
    if not FILES:
        pytest.skip(f"no manifests under {CORPUS}")


@pytest.mark.parametrize(
    ("unsafe", "text_edits"), [(False, True), (True, True), (True, False)], ids=["safe", "unsafe", "unsafe-round-trip"]
)
@pytest.mark.parametrize("path", FILES, ids=_ids)
def test_fix_keeps_its_promises(path: Path, unsafe: bool, text_edits: bool) -> None:
    text, _bom = decode(path.read_bytes())
    lint = linter()
    options = FixOptions(unsafe=unsafe, text_edits=text_edits)
    outcome = fix_text(path.name, text, lint, options)
    assert outcome.error is None, outcome.error
    assert outcome.converged
    # No finding with an applicable fix remains (the loop ran until none was left).
    leftovers = [r for r in outcome.remaining if r.reason.startswith(("not applied", "its edits", "the fix did"))]
    assert not leftovers, leftovers
    fixed_safe = {a.code for a in outcome.applied if a.safety == "safe"}
    for rest in outcome.remaining:
        if rest.code in fixed_safe:
            assert rest.reason == "no automatic fix", rest
    # Every comment survives.
    assert not comment_lines(text) - comment_lines(outcome.fixed)
    # Trailing comments too, except those on lines a fix rewrote, which it removes and reports.
    dropped = Counter(d for a in outcome.applied for d in a.dropped_comments)
    assert not inline_comments(text) - inline_comments(outcome.fixed) - dropped
    # Parsed objects are equal outside the paths the fixes touched.
    before = load_text(path.name, text)
    after = load_text(path.name, outcome.fixed)
    assert len(before.documents) == len(after.documents)
    assert [p.code for p in before.problems] == [p.code for p in after.problems]
    touched = touched_by_document(outcome.applied, before.documents)
    for old, new in zip(before.documents, after.documents, strict=True):
        paths = touched.get(old.index, [])
        assert strip_paths(old.data, paths) == strip_paths(new.data, paths)
        if not paths:
            continue
        if old.api_version in CORE_GROUPS and schema_errors(old.data) is None:
            assert schema_errors(new.data) is None
    # Untouched texts stay byte for byte; a second run changes nothing.
    if not outcome.applied:
        assert outcome.fixed == text
    again = fix_text(path.name, outcome.fixed, lint, options)
    assert again.fixed == outcome.fixed
    assert not again.applied


def test_corpus_has_fixes_to_apply() -> None:
    """The corpus exercises the fixer: some files change under safe fixes alone."""
    changed = 0
    for path in FILES:
        text, _bom = decode(path.read_bytes())
        changed += fix_text(path.name, text, linter()).changed
    assert changed >= 5


def test_fix_the_corpus_in_place_on_a_copy(tmp_path: Path) -> None:
    """The CLI on a copy of the corpus: writes some files, leaves no temporary file behind, and then
    `--check` finds nothing left to change."""
    import shutil

    from typer.testing import CliRunner

    from kubegpu.cli.main import app
    from kubegpu.manifests.atomic import TEMP_SUFFIX

    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    # the shared corpus may be read-only, and fix refuses read-only files: the copy is the user's own tree
    for entry in [copy, *copy.rglob("*")]:
        entry.chmod(0o755 if entry.is_dir() else 0o644)
    before = {p: p.read_bytes() for p in copy.rglob("*.y*ml")}
    first = CliRunner().invoke(app, ["fix", "--exit-zero", str(copy)])
    assert first.exit_code == 0, first.output
    changed = [p for p, data in before.items() if p.read_bytes() != data]
    assert changed
    assert CliRunner().invoke(app, ["fix", "--check", str(copy)]).exit_code == 0
    assert not [p for p in copy.rglob("*") if p.name.endswith(TEMP_SUFFIX)]
