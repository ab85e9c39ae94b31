"""Linting in several processes gives exactly the findings, order and counts of one process.

The case tables' multi-object manifests are split one object per file, so that the objects a
cross-object rule relates (an HPA and its Deployment, a PodGroup and its pods, a TrainJob and its
runtime) land in different processes.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.lint import LintConfig, engine, lint_paths, parallel, processes
from kubegpu.manifests import Document, Location, ObjectRef, discover, load_text
from kubegpu.report.findings_json import render_json
from kubegpu.ruleapi import WHOLE_INPUT_KINDS, ContextError, Finding, Fix, RuleContext, Safety, Severity
from tests.paths import SHARED_DIR
from tests.rules.kg_cases import CASES_DIR

CORPUS = SHARED_DIR / "corpus" / "real"


def _split_cases(folder: Path) -> int:
    """Write every object of every case manifest to its own file; return how many cases had several."""
    several = 0
    for table_path in sorted(CASES_DIR.glob("*.yaml")):
        table = yaml.safe_load(table_path.read_text())
        for number, case in enumerate(table["cases"]):
            if "manifest" not in case or case.get("node") or case.get("kubelet_config"):
                continue
            parts = [p for p in str(case["manifest"]).split("\n---") if p.strip()]
            several += len(parts) > 1
            case_dir = folder / table_path.stem / f"case{number:03d}"
            case_dir.mkdir(parents=True)
            for i, part in enumerate(parts):
                (case_dir / f"object{i}.yaml").write_text(part.lstrip("-\n") + "\n")
    return several


def test_split_case_tables_give_the_same_findings(tmp_path: Path) -> None:
    assert _split_cases(tmp_path) >= 10  # enough cross-object cases to matter
    config = LintConfig()
    one = lint_paths([str(tmp_path)], config)
    for count in (2, 3):
        many = lint_paths([str(tmp_path)], config, jobs=count)
        assert render_json(many) == render_json(one)
    for count in (1, 2):  # streamed file by file, as the command lints
        streamed = lint_paths([str(tmp_path)], config, jobs=count, keep_documents=False)
        assert render_json(streamed) == render_json(one)
    assert any(f.name == "inference-scale-to-zero" and "HPA" in f.message for f in one.findings)


def test_each_table_alone_gives_the_same_findings(tmp_path: Path) -> None:
    """Tables without autoscalers or PodGroups share only the looked-up kinds between processes."""
    _split_cases(tmp_path)
    config = LintConfig()
    partial = 0
    for table in sorted(p for p in tmp_path.iterdir() if p.is_dir()):
        one = lint_paths([str(table)], config)
        assert render_json(lint_paths([str(table)], config, jobs=2)) == render_json(one), table.name
        partial += not any(
            d.kind in WHOLE_INPUT_KINDS
            for item in engine.load_sources([str(table)], config.max_file_bytes)
            for d in item.documents
        )
    assert partial >= 5


def test_checks_read_other_objects_only_as_declared() -> None:
    """The contract that lets processes share less: lookups by declared kind, whole input for some kinds."""
    docs = lint_text_documents(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\n"
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\n"
    )
    ctx = RuleContext(options={}, all_documents=docs)
    assert ctx.documents_of("PersistentVolumeClaim") == ()
    with pytest.raises(ContextError, match="LOOKED_UP_KINDS"):
        ctx.documents_of("Deployment")
    assert ctx.whole_input(docs[1]) == docs
    with pytest.raises(ContextError, match="WHOLE_INPUT_KINDS"):
        ctx.whole_input(docs[0])
    partial = RuleContext(options={}, all_documents=docs[:1], whole_input_shared=False)
    with pytest.raises(ContextError, match="not shared"):
        partial.whole_input(docs[1])


def lint_text_documents(text: str) -> tuple[Document, ...]:
    return tuple(load_text("objects.yaml", text).documents)


def test_unreadable_files_and_dockerfiles_give_the_same_findings(tmp_path: Path) -> None:
    """Bad input is reported by whichever process reads it, exactly as one process reports it."""
    (tmp_path / "binary.yaml").write_bytes(b"\x00\x01kind: Pod\n")
    (tmp_path / "latin1.yaml").write_bytes("metadata: {name: caf\u00e9}\n".encode("latin-1"))
    (tmp_path / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    (tmp_path / "dup.yaml").write_text("apiVersion: v1\nkind: Pod\nkind: Pod\nmetadata: {name: p}\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN make\n")
    for i in range(3):
        (tmp_path / f"job{i}.yaml").write_text(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - {name: c, image: 'nvcr.io/nvidia/pytorch:24.05-py3', "
            "resources: {limits: {nvidia.com/gpu: $GPUS}}}\n"
        )
    config = LintConfig()
    one = lint_paths([str(tmp_path)], config)
    assert {"KG001", "KG003", "KG004", "KG006"} <= {f.code for f in one.findings}
    assert render_json(lint_paths([str(tmp_path)], config, jobs=2)) == render_json(one)
    split = lint_paths([str(tmp_path)], config, jobs=2)
    assert split.unread == one.unread == 3 and not split.unreadable  # three inputs unread, the others linted
    for path in tmp_path.iterdir():
        if path.name not in {"binary.yaml", "latin1.yaml", "broken.yaml"}:
            path.unlink()
    assert lint_paths([str(tmp_path)], config, jobs=2).unreadable  # nothing could be read at all


def test_cross_file_relations_survive_the_split(tmp_path: Path) -> None:
    """An HPA in one process, its GPU Deployment in the other: the HPA is still flagged."""
    (tmp_path / "a-deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - {name: vllm, image: 'vllm/vllm-openai:v0.6.3', resources: {limits: "
        "{nvidia.com/gpu: 1}}}\n" + "# padding\n" * 50
    )
    (tmp_path / "b-hpa.yaml").write_text(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: vllm}\nspec:\n"
        "  minReplicas: 0\n  maxReplicas: 4\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}\n"
    )
    config = LintConfig(select=("inference-scale-to-zero",))
    inputs = list(discover([str(tmp_path)]))
    shares = parallel._split(inputs, processes.input_sizes(inputs), 2)
    assert all(len(share.entries) == 1 for share in shares)
    result = lint_paths([str(tmp_path)], config, jobs=2)
    assert [(Path(f.location.file).name, f.location.line) for f in result.findings] == [("b-hpa.yaml", 5)]


def test_cli_jobs_option(tmp_path: Path) -> None:
    _split_cases(tmp_path)
    runner = CliRunner()
    one = runner.invoke(app, ["lint", str(tmp_path), "-o", "json", "--jobs", "1"])
    two = runner.invoke(app, ["lint", str(tmp_path), "-o", "json", "-j", "2"])
    assert one.exit_code == two.exit_code != 0
    assert one.stdout == two.stdout
    assert runner.invoke(app, ["lint", str(tmp_path), "-j", "-1"]).exit_code == 2


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/real is not beside this checkout")
def test_real_corpus_gives_the_same_findings() -> None:
    config = LintConfig()
    one = lint_paths([str(CORPUS)], config)
    many = lint_paths([str(CORPUS)], config, jobs=2)
    assert render_json(many) == render_json(one)
    assert (many.files, many.documents, many.templates, many.gpu_templates, many.suppressed) == (
        one.files,
        one.documents,
        one.templates,
        one.gpu_templates,
        one.suppressed,
    )


def test_a_failing_worker_raises_instead_of_hanging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        (tmp_path / f"pod{i}.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n")
    parent = os.getpid()
    real = engine.lint_loaded

    def broken_in_children(*args: object, **kwargs: object) -> object:
        if os.getpid() != parent:
            raise ValueError("boom")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "lint_loaded", broken_in_children)
    with pytest.raises(parallel.ParallelLintError, match="boom"):
        lint_paths([str(tmp_path)], LintConfig(), jobs=2)


def test_process_plan(tmp_path: Path) -> None:
    small = tmp_path / "small.yaml"
    small.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    small_sizes = processes.input_sizes(list(discover([str(small)])))
    assert small_sizes == [small.stat().st_size]
    assert processes.plan_processes(small_sizes, 0) == 1  # too little to parse for a second process
    assert processes.plan_processes(small_sizes, 1) == 1
    assert processes.plan_processes(small_sizes, 3) == 3
    assert processes.plan_processes(small_sizes, 99) == processes.MAX_PROCESSES
    big = tmp_path / "big.yaml"
    big.write_text("# filler\n" * (processes.MIN_BYTES_PER_PROCESS // 9 * 3))
    big_sizes = processes.input_sizes(list(discover([str(big)])))
    assert processes.plan_processes(big_sizes, 0) == min(3, processes.available_processes())
    assert processes.input_sizes([("-", None, "manifest"), ("gone", tmp_path / "gone.yaml", "manifest")]) == [0, 0]


@given(
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    st.integers(min_value=1, max_value=5),
    st.booleans(),
)
def test_shares_cover_every_file_once_in_order(sizes: list[int], count: int, with_stdin: bool) -> None:
    inputs: list[tuple[str, Path | None, str]] = [(f"f{i}", Path(f"f{i}"), "manifest") for i in range(len(sizes))]
    if with_stdin:
        inputs.append(("-", None, "manifest"))
    entries = [(i, *item) for i, item in enumerate(inputs)]
    shares = parallel._split(inputs, [*sizes, 0] if with_stdin else sizes, count)
    assert len(shares) == count
    seen = [entry for share in shares for entry in share.entries]
    assert sorted(e[0] for e in seen) == [e[0] for e in entries]
    for share in shares:
        assert list(share.entries) == sorted(share.entries, key=lambda e: e[0])
    if with_stdin:
        assert shares[0].entries[-1][2] is None  # stdin is read by the first process only
    loads = [sum(sizes[e[0]] for e in share.entries if e[2] is not None) for share in shares]
    assert max(loads) - min(loads) <= max(sizes, default=0)


def test_a_runtime_created_by_an_argo_step_binds_its_trainjob_in_every_process(tmp_path: Path) -> None:
    """A ClusterTrainingRuntime written in an Argo step's manifest binds a TrainJob of the same file with --jobs too."""
    runtime = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: rt}\nspec:\n"
        "  mlPolicy: {numNodes: 4, torch: {}}\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n"
        "        template:\n          metadata:\n"
        "            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
        "          spec:\n            template:\n              spec:\n                containers:\n"
        "                - {name: node, image: 'pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime'}\n"
    )
    manifest = "".join(f"          {line}\n" for line in runtime.splitlines())
    (tmp_path / "a-train.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: setup}\nspec:\n  entrypoint: make\n"
        "  templates:\n  - name: make\n    resource:\n      action: apply\n      manifest: |\n" + manifest + "---\n"
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\nspec:\n"
        "  runtimeRef: {name: rt}\n  trainer: {resourcesPerNode: {limits: {nvidia.com/gpu: 8}}}\n"
    )
    (tmp_path / "b-other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n" + "# pad\n" * 50)
    config = LintConfig(select=("gang-missing",))
    one = lint_paths([str(tmp_path)], config, jobs=1)
    several = lint_paths([str(tmp_path)], config, jobs=2)
    assert [f.message for f in several.findings] == [f.message for f in one.findings]
    assert any("its 4 pods (trainer)" in f.message for f in one.findings)


def test_a_runtime_created_by_a_workflow_step_is_looked_up_in_every_mode(tmp_path: Path) -> None:
    """The command streams file by file (and splits files between processes): the runtime an Argo step creates
    in one file must still be the runtime of a TrainJob in another, as when the whole input is read at once."""
    table = yaml.safe_load((CASES_DIR / "argo_resource.yaml").read_text())
    case = next(c for c in table["cases"] if c["name"].startswith("a TrainJob binds to the runtime a workflow"))
    workflow, trainjob = (p for p in str(case["manifest"]).split("\n---") if p.strip())
    (tmp_path / "workflow.yaml").write_text(workflow)
    (tmp_path / "trainjob.yaml").write_text(trainjob.lstrip("-\n"))
    config = LintConfig(select=("KG201", "KG501"))
    whole = lint_paths([str(tmp_path)], config)
    assert whole.findings == []
    for count in (1, 2):
        for keep in (True, False):
            again = lint_paths([str(tmp_path)], config, jobs=count, keep_documents=keep)
            assert render_json(again) == render_json(whole)


_TEXT = st.text(max_size=8)
_REFS = st.one_of(st.none(), st.builds(ObjectRef, _TEXT, _TEXT, st.one_of(st.none(), _TEXT), _TEXT))
_FIXES = st.one_of(st.none(), st.builds(Fix, _TEXT, st.sampled_from(list(Safety)), st.just(())))
_FINDINGS = st.builds(
    Finding,
    st.sampled_from(["KG001", "KG010"]),
    st.sampled_from(["dshm-missing", "gpu-pod-not-guaranteed"]),
    st.sampled_from(list(Severity)),
    _TEXT,
    st.builds(
        Location,
        st.sampled_from(["a.yaml", "dir/b.yaml"]),
        st.integers(1, 2**31 - 1),
        st.integers(1, 2**31 - 1),
        st.lists(st.one_of(_TEXT, st.integers(0, 9)), max_size=4).map(tuple),
    ),
    _REFS,
    _FIXES,
)


@given(st.lists(_FINDINGS, max_size=30), st.data())
def test_findings_cross_the_pipe_unchanged(findings: list[Finding], data: st.DataObject) -> None:
    # Findings of one object share its ref and fixes are shared descriptions: repeat some, as a run does.
    if findings:
        shared = data.draw(st.sampled_from(findings))
        findings += [
            Finding(f.code, f.name, f.severity, f.message, f.location, shared.obj, shared.fix) for f in findings
        ]
    rebuilt = parallel._findings(pickle.loads(pickle.dumps(parallel._columns(findings))))
    assert rebuilt == findings
    assert [type(f.severity) for f in rebuilt] == [Severity] * len(findings)
