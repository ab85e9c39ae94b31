"""Section 13.4 rules: the YAML case table, the cache-path and mount helpers, and (for 13.3 and 13.4 together)
agreement with the expert's `V:` notes on the real-world corpus; where they differ, the tables say who is right.
"""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubegpu.lint import LintConfig, lint_paths, lint_text
from kubegpu.manifests import ContainerRef, format_path
from kubegpu.serving.servers import MountView, Token, _flag, _flags, hf_cache_dir, mount_for, shell_tokens

TABLE = yaml.safe_load((Path(__file__).parent / "cases" / "models.yaml").read_text())


def _expected(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [] if case["expect"] == "none" else list(case["expect"])


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_case(case: dict[str, Any]) -> None:
    config = LintConfig(select=tuple(case.get("select", TABLE["select"])))
    result = lint_text(f"{case['name']}.yaml", case["manifest"], config)
    got = sorted((f.name, f.location.line, f.location.dotted_path) for f in result.findings)
    want = sorted((e["rule"], e["line"], e["path"]) for e in _expected(case))
    assert got == want, [f.message for f in result.findings]
    for entry in _expected(case):
        key = (entry["rule"], entry["line"], entry["path"])
        finding = next(f for f in result.findings if (f.name, f.location.line, f.location.dotted_path) == key)
        if "severity" in entry:
            assert finding.severity.value == entry["severity"]
        if "fix" not in entry:
            continue
        if entry["fix"] is None:
            assert finding.fix is None
            continue
        assert finding.fix is not None
        assert finding.fix.safety.value == entry["fix"]["safety"]
        assert [[e.op, format_path(e.path), e.value] for e in finding.fix.edits] == entry["fix"]["edits"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "/root/.cache/huggingface/hub"),
        ({"HF_HOME": "/cache/"}, "/cache/hub"),
        ({"HF_HOME": "/a", "HF_HUB_CACHE": "/b"}, "/b"),
        ({"HUGGINGFACE_HUB_CACHE": "/c", "HF_HOME": "/a"}, "/c"),
        ({"XDG_CACHE_HOME": "/x"}, "/x/huggingface/hub"),
        ({"HF_HOME": "$(CACHE)"}, None),
    ],
)
def test_hf_cache_dir_follows_huggingface_hub_precedence(env: dict[str, str], expected: str | None) -> None:
    assert hf_cache_dir(env, "/root") == expected


def _view(index: int, path: str) -> MountView:
    return MountView(index, {"name": f"v{index}", "mountPath": path}, path.rstrip("/") or "/", None, None)


def test_deepest_mount_wins() -> None:
    views = [_view(0, "/data"), _view(1, "/data/hub"), _view(2, "/datax")]
    assert mount_for(views, "/data/hub/models--x").index == 1  # type: ignore[union-attr]
    assert mount_for(views, "/data/other").index == 0  # type: ignore[union-attr]
    assert mount_for(views, "/dat") is None
    assert mount_for(views, "/datax/y").index == 2  # type: ignore[union-attr]


@given(
    st.lists(st.from_regex(r"(/[a-z]{1,3}){1,3}", fullmatch=True), min_size=1, max_size=5),
    st.from_regex(r"(/[a-z]{1,3}){1,4}", fullmatch=True),
)
def test_mount_for_returns_a_prefix_mount(paths: list[str], target: str) -> None:
    views = [_view(i, p) for i, p in enumerate(paths)]
    found = mount_for(views, target)
    holders = [v for v in views if target == v.mount_path or target.startswith(v.mount_path + "/")]
    if not holders:
        assert found is None
    else:
        assert found is not None and len(found.mount_path) == max(len(v.mount_path) for v in holders)


def test_scale_to_zero_message_names_the_target_and_the_default() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers: [{name: v, image: "vllm/vllm-openai:v0.8.5", resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: so}
spec:
  scaleTargetRef: {name: vllm}
"""
    [finding] = lint_text("k.yaml", text, LintConfig(select=("KG403",))).findings
    assert "KEDA's default is 0" in finding.message and "Deployment 'vllm'" in finding.message
    assert finding.obj is not None and finding.obj.kind == "ScaledObject"


# Note tags (INDEX.tsv `V:` entries) and the rule that reports each.
TAG_RULES = {
    "pull-always": "image-pull-always",
    "latest-tag": "image-tag-mutable",
    "mutable-tag": "image-tag-mutable",
    "devel-runtime": "image-devel-runtime",
    "no-model-cache": "model-cache-missing",
    "scale-to-zero": "inference-scale-to-zero",
}
OURS = (
    "image-pull-always",
    "image-tag-mutable",
    "image-devel-runtime",
    "model-cache-missing",
    "model-cache-writable-shared",
    "inference-scale-to-zero",
)

# Findings the notes do not list, and why kubegpu is right.
EXTRA = {
    (
        "kubernetes-sigs__jobset/site__static__examples__workload-aware-scheduling__dra__jobset.yaml",
        "image-tag-mutable",
    ): "image 'busybox' has no tag, which means :latest; the note omits it",
    (
        "kubernetes-sigs__jobset/site__static__examples__workload-aware-scheduling__dra__jobset.yaml",
        "image-pull-always",
    ): "no tag and no imagePullPolicy: Kubernetes defaults the policy to Always",
    (
        "vllm-project__production-stack/operator__config__samples__production-stack_v1alpha1_vllmruntime.yaml",
        "model-cache-writable-shared",
    ): "the operator mounts the RWX storageConfig PVC read-write into both replicas "
    "(vllmruntime_controller.go) and vLLM downloads into it (HF_HOME=/data): a shared writable cache",
}
# Notes kubegpu does not report, and why.
MISSING: dict[tuple[str, str], str] = {}
_V = re.compile(r"(?:^|\|)\s*V:\s*([^|]*)")


def _notes(shared: Path) -> list[tuple[str, set[str]]]:
    rows = []
    with (shared / "corpus" / "real" / "INDEX.tsv").open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            tags: set[str] = set()
            for segment in _V.findall(row["notes"]):
                for item in segment.split(";"):
                    word = re.match(r"\s*([a-z][a-z-]*)", item)
                    if word and word.group(1) in TAG_RULES:
                        tags.add(TAG_RULES[word.group(1)])
            rows.append((row["local_file"], tags))
    return rows


def test_corpus_agrees_with_notes(shared_dir: Path) -> None:
    corpus = shared_dir / "corpus" / "real"
    result = lint_paths([str(corpus)], LintConfig(select=OURS))
    found: dict[str, set[str]] = {}
    implicit_pull: dict[str, bool] = {}
    for finding in result.findings:
        if finding.severity.value == "info" and "rendered value" in finding.message:
            continue  # a hedge on a placeholder's rendered value, not a claim
        name = Path(finding.location.file).resolve().relative_to(corpus.resolve()).as_posix()
        found.setdefault(name, set()).add(finding.name)
        if finding.name == "image-pull-always":
            implicit = finding.location.dotted_path.endswith(".image")
            implicit_pull[name] = implicit_pull.get(name, True) and implicit
    problems = []
    for name, expected in _notes(shared_dir):
        actual = found.get(name, set())
        for rule in sorted(actual - expected):
            if (name, rule) in EXTRA:
                continue
            # Kubernetes defaults imagePullPolicy to Always for ':latest' or no tag (SetDefaults_Container); the
            # notes list only an explicit Always, and record the cause as latest-tag.
            if rule == "image-pull-always" and implicit_pull.get(name) and "image-tag-mutable" in expected:
                continue
            problems.append(f"{name}: {rule} reported but not in the notes")
        for rule in sorted(expected - actual):
            if (name, rule) not in MISSING:
                problems.append(f"{name}: notes list {rule} but it was not reported")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", sorted({**EXTRA, **MISSING}))
def test_documented_disagreements_still_hold(shared_dir: Path, key: tuple[str, str]) -> None:
    """Each documented disagreement is still a disagreement (delete the entry when the rule changes)."""
    name, rule = key
    result = lint_paths([str(shared_dir / "corpus" / "real" / name)], LintConfig(select=(rule,)))
    assert bool(result.findings) is (key in EXTRA)


_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(max_size=12),
    st.sampled_from(
        [
            "vllm/vllm-openai:v0.8.5",
            "--model",
            "meta-llama/x",
            "/models",
            "hf://a/b",
            "0",
            "Always",
            "ReadWriteMany",
            "s3://b/m",
            "tensorizer",
        ]
    ),
)
_value = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)
_container = st.fixed_dictionaries(
    {"name": st.text(max_size=5)},
    optional={
        "image": _value,
        "imagePullPolicy": _value,
        "command": _value,
        "args": _value,
        "env": _value,
        "volumeMounts": _value,
        "storageUri": _value,
        "resources": st.just({"limits": {"nvidia.com/gpu": 1}}),
    },
)


@given(
    containers=st.lists(_container, min_size=1, max_size=3),
    volumes=_value,
    annotations=_value,
    kind=st.sampled_from(["Deployment", "InferenceService", "RayService", "Service"]),
)
def test_rules_never_crash_on_odd_pod_specs(
    containers: list[dict[str, Any]], volumes: Any, annotations: Any, kind: str
) -> None:
    api = {
        "Deployment": "apps/v1",
        "InferenceService": "serving.kserve.io/v1beta1",
        "RayService": "ray.io/v1",
        "Service": "serving.knative.dev/v1",
    }[kind]
    pod = {"metadata": {"annotations": annotations}, "spec": {"containers": containers, "volumes": volumes}}
    if kind == "InferenceService":
        spec: dict[str, Any] = {"predictor": {"minReplicas": 0, "containers": containers}}
    elif kind == "RayService":
        spec = {"serveConfigV2": "transformers", "rayClusterConfig": {"headGroupSpec": {"template": pod}}}
    else:
        spec = {"template": pod}
    docs = [
        {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}, "spec": spec},
        {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": {"name": "s"},
            "spec": {"scaleTargetRef": {"name": "x", "kind": kind}, "idleReplicaCount": 0, "minReplicaCount": 1},
        },
    ]
    text = yaml.safe_dump_all(docs)
    result = lint_text("fuzz.yaml", text, LintConfig(select=("KG3", "KG4")))
    for finding in result.findings:
        assert finding.location.line >= 1 and finding.message


@given(st.text(alphabet=st.sampled_from(list("ab c\t\n\r-=/.$:'\"#\\\x0c\u00a0")), max_size=40))
def test_shell_scripts_split_as_shlex_does(script: str) -> None:
    """The fast split of quote-free scripts gives shlex's words; anything else goes through shlex."""
    text = f"run {script} x"
    container = ContainerRef(("spec", "containers", 0), {"args": [text]}, "container")
    try:
        expected = shlex.split(text.replace("\\\n", " "), comments=True)
    except ValueError:
        expected = text.replace("\\\n", " ").split()
    assert [t.text for t in shell_tokens(container)] == expected


def _flag_by_scan(tokens: list[Token], *names: str) -> Token | None:
    """The first `--name value` / `--name=value` of any of `names`, found by scanning the words (the oracle)."""
    wanted = {n.replace("_", "-") for n in names}
    for i, token in enumerate(tokens):
        key, eq, value = token.text.partition("=")
        if not token.text.startswith("--") or key.replace("_", "-") not in wanted:
            continue
        if eq:
            return Token(value, token.field)
        if i + 1 < len(tokens) and not tokens[i + 1].text.startswith("--"):
            return tokens[i + 1]
    return None


_WORDS = ["--model", "--model=a/b", "--model_path", "--model-path=/m", "--model-id", "x/y", "/w", "--port", "8000", "="]


@given(st.lists(st.sampled_from(_WORDS), max_size=8), st.lists(st.sampled_from(["command", "args"]), min_size=8))
def test_flags_read_once_give_the_first_value_of_any_name(words: list[str], fields: list[str]) -> None:
    """A container's flags are indexed once; a lookup gives what a scan of its words gives (dash or underscore,
    `=` or the next word, a flag without a value skipped, the earliest of several names)."""
    tokens = [Token(w, f) for w, f in zip(words, fields, strict=False)]
    flags = _flags(tokens)
    for names in (("--model",), ("--model", "--model-path", "--model-id"), ("--model_path",), ("--port",)):
        assert _flag(flags, *names) == _flag_by_scan(tokens, *names)
