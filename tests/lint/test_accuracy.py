"""The accuracy scorer (tests/lint/accuracy.py): notes parse, the vocabulary names real rules, the external
table is well formed, counts are right on a case written here, and it runs on the shared corpus.

Recall and precision are reported (docs/accuracy.md), not asserted: they move as rules improve.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from kubegpu.lint import Severity, all_rules
from tests.lint import accuracy

GPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: serve}
spec:
  replicas: 2
  selector: {matchLabels: {app: serve}}
  template:
    metadata: {labels: {app: serve}}
    spec:
      containers:
      - name: server
        image: registry.example.com/server:1.4.2
        resources:
          limits: {nvidia.com/gpu: 1}
"""


def test_tags_split_outside_parentheses() -> None:
    notes = "V: qos-burstable (cpu 2; mem 4Gi | odd); no-dshm; latest-tag(x:latest) | OK: integer-cpu(2) | NOTE: V: no"
    assert accuracy.tags(notes, "V:") == ["qos-burstable", "no-dshm", "latest-tag"]
    assert accuracy.tags(notes, "OK:") == ["integer-cpu"]


def test_vocabulary_names_registered_rules() -> None:
    registered = {rule.code for rule in all_rules()}
    assert {tag.rule for tag in accuracy.VOCABULARY.values()} <= registered
    assert {code for codes in accuracy.IMPLIED.values() for code in codes} <= registered


def test_external_table_is_well_formed() -> None:
    with accuracy.DEFAULT_VERDICTS.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert len(rows) >= 40
    assert len({(row["repo"], row["path"]) for row in rows}) == len(rows)
    for row in rows:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", row["repo"]), row
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row
        assert row["kinds"] and row["notes"], row
        words = accuracy.tags(row["notes"], "V:") + accuracy.tags(row["notes"], "OK:")
        unknown = [w for w in words if w not in accuracy.VOCABULARY and w not in accuracy.UNSCORED_TAGS]
        assert not unknown, (row["path"], unknown)


def test_adjudications_are_well_formed() -> None:
    items = accuracy.load_adjudications(accuracy.DEFAULT_ADJUDICATIONS)
    assert items
    rules = {tag.rule for tag in accuracy.VOCABULARY.values()}
    for item in items:
        assert item.set in ("corpus", "external") and item.rule in rules and item.reason, item


def test_counts_on_a_case_written_here() -> None:
    verdict = accuracy.Verdict("serve.yaml", "V: qos-besteffort; no-dshm; no-gang | OK: pinned-image", GPU_DEPLOYMENT)
    score = accuracy.score_set("case", "external", [verdict], False, Severity.WARNING)
    (file,) = score.files
    assert file.expected == {"KG101", "KG201", "KG501"}
    assert {"KG101", "KG201"} <= file.fired and "KG302" not in file.fired
    assert file.missed == {"KG501"}  # a serving Deployment is not a gang: the verdict above is wrong on purpose
    tp, fn, fp = score.counts()
    assert (tp, fn) == (2, 1) and fp == len(file.extra)
    adjudication = accuracy.Adjudication("external", "serve.yaml", "KG501", "missed", "verdict-wrong", "case", "why")
    assert score.adjudicated_counts([adjudication])[:2] == (2, 0)


TEMPLATED_JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: train}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: $NUM_NODES
      template:
        spec:
          containers:
          - name: pytorch
            image: ${IMAGE_URI}
            resources:
              limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 8}
"""


def test_placeholder_hedges_agree_with_a_verdict_only_when_counted() -> None:
    """An info finding that says the check depends on a placeholder's rendered value: a miss by default; with
    --placeholder-hedges count it agrees with a verdict naming the violation, and is nothing where none is named."""
    verdict = accuracy.Verdict("train.yaml", "V: no-gang", TEMPLATED_JOB)
    strict = accuracy.score_set("case", "external", [verdict], False, Severity.WARNING)
    assert strict.files[0].missed == {"KG501"} and "KG501" in strict.files[0].info_only
    counted = accuracy.score_set("case", "external", [verdict], False, Severity.WARNING, hedges=True)
    (file,) = counted.files
    assert not file.missed and file.hedged == {"KG501"}
    # KG601 and KG302 hedge too (worker count, image tag), but the verdict names neither: not extras
    assert not {"KG601", "KG302"} & file.extra


def test_an_agreement_both_got_wrong_counts_against_precision() -> None:
    verdict = accuracy.Verdict("serve.yaml", "V: qos-besteffort; no-dshm", GPU_DEPLOYMENT)
    score = accuracy.score_set("case", "external", [verdict], False, Severity.WARNING)
    tp, fn, fp = score.counts()
    wrong = accuracy.Adjudication("external", "serve.yaml", "KG101", "agreed", "both-wrong", "case", "why")
    assert score.adjudicated_counts([wrong]) == (tp - 1, fn, fp + 1)
    assert "agreed KG101: both-wrong" in accuracy.render(score, [wrong])


def test_every_verdict_table_is_well_formed() -> None:
    for table in sorted(accuracy.DEFAULT_VERDICTS.parent.glob("*_verdicts.tsv")):
        with table.open(encoding="utf-8") as handle:
            rows = [r for r in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE) if r["repo"][:1] != "#"]
        assert len(rows) >= 10, table
        assert len({(row["repo"], row["path"]) for row in rows}) == len(rows), table
        for row in rows:
            assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), row
            words = accuracy.tags(row["notes"], "V:") + accuracy.tags(row["notes"], "OK:")
            assert all(w in accuracy.VOCABULARY or w in accuracy.UNSCORED_TAGS for w in words), row


def test_reads_external_files_from_a_folder(tmp_path: Path) -> None:
    (tmp_path / "clones" / "acme" / "charts" / "deploy").mkdir(parents=True)
    (tmp_path / "clones" / "acme" / "charts" / "deploy" / "serve.yaml").write_text(GPU_DEPLOYMENT)
    table = tmp_path / "verdicts.tsv"
    table.write_text(
        "repo\tpath\tcommit\tkinds\tnotes\n"
        f"acme/charts\tdeploy/serve.yaml\t{'0' * 40}\tDeployment\tV: no-dshm\n"
        f"acme/charts\tdeploy/gone.yaml\t{'0' * 40}\tDeployment\tV: no-dshm\n"
    )
    verdicts = accuracy.external_verdicts(table, None, tmp_path / "clones")
    assert [v.text is not None for v in verdicts] == [True, False]
    assert "neither mirrored" in verdicts[1].missing


def test_skips_with_a_message_when_data_is_absent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert accuracy.main(["--corpus", str(tmp_path / "none"), "--mirror", str(tmp_path / "none")]) == 0
    err = capsys.readouterr().err
    assert "skipped the shared corpus" in err and "skipped the external verdicts" in err


def test_scores_the_shared_corpus(shared_dir: Path) -> None:
    corpus = shared_dir / "corpus" / "real"
    if not (corpus / "INDEX.tsv").is_file():
        pytest.skip(f"{corpus / 'INDEX.tsv'} is absent")
    verdicts = accuracy.corpus_verdicts(corpus)
    score = accuracy.score_set("corpus", "corpus", verdicts, True, Severity.WARNING)
    assert len(score.files) + len(score.unavailable) == len(verdicts) > 0
    tp, fn, _ = score.counts()
    assert tp + fn > 0  # the notes name violations, so recall is defined
    report = accuracy.render(score, accuracy.load_adjudications(accuracy.DEFAULT_ADJUDICATIONS))
    assert "| **all** |" in report and " %" in report
