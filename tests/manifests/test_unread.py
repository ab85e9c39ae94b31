"""Rendered output cut before it is built: objects of kinds no rule reads keep their header on its lines; everything
else, and every object whose layout is not plain, is kept whole."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubegpu.lint.inventory import unread_kind
from kubegpu.lint.registry import all_rules
from kubegpu.manifests import load_text
from kubegpu.manifests import unread as unread_module
from kubegpu.manifests.unread import strip_unread
from tests.lint.render_repo import gpu_deployment, large_crd


def _unread(api_version: str, kind: str) -> bool:
    return unread_kind(api_version, kind, all_rules())


def test_a_crd_keeps_its_header_and_lines() -> None:
    crd = large_crd("example.com", "Thing", 16)
    text = f"{gpu_deployment('a')}---\n{crd}---\n{gpu_deployment('b')}"
    cut, count = strip_unread(text, _unread)
    assert count == 1
    assert cut.count("\n") == text.count("\n")
    assert len(cut) < len(text) // 4
    loaded = load_text("out.yaml", cut)
    assert [d.kind for d in loaded.documents] == ["Deployment", "CustomResourceDefinition", "Deployment"]
    original = load_text("out.yaml", text)
    for before, after in zip(original.documents, loaded.documents, strict=True):
        assert before.start_line == after.start_line
        assert before.metadata == after.metadata
    assert loaded.documents[2].data == original.documents[2].data
    assert "spec" not in loaded.documents[1].data


def test_kinds_rules_read_are_kept_whole() -> None:
    """The model decides: workloads, looked-up kinds (ConfigMap) and kinds read generically stay whole."""
    big = "x" * 5000
    for api_version, kind in (("v1", "ConfigMap"), ("apps/v1", "Deployment"), ("example.com/v1", "Trainer")):
        text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: a\nspec:\n  note: {big}\n"
        assert strip_unread(text, _unread) == (text, 0)
    assert _unread("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert _unread("rbac.authorization.k8s.io/v1", "ClusterRole")
    assert not _unread("kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration")  # a document rule reads it


def test_objects_not_plainly_laid_out_are_kept_whole() -> None:
    big = "d" * 5000
    cases = [
        # flow style at the top level, continued at column 0
        f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: a}}\nspec: {{x: 1,\n"
        f"y: {big}}}\n",
        # an alias in the header naming an anchor in the body
        f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: &s {{note: {big}}}\n"
        "metadata:\n  name: a\n  labels: *s\n",
        # a merge key at the top level
        f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n<<: {{a: {big}}}\nmetadata: {{}}\n",
        # the kind not a plain value
        f"apiVersion: apiextensions.k8s.io/v1\nkind: !!str CustomResourceDefinition\nspec: {big}\n",
        # a list
        f"apiVersion: v1\nkind: List\nitems: []\nspec: {big}\n",
    ]
    for text in cases:
        assert strip_unread(text, _unread) == (text, 0), text[:120]


_names = st.text(alphabet="abcdefghij-", min_size=1, max_size=8).filter(lambda s: s[0] != "-" and s[-1] != "-")


@st.composite
def _streams(draw: st.DrawFn) -> str:
    docs = []
    for _ in range(draw(st.integers(1, 4))):
        name = draw(_names)
        kind = draw(st.sampled_from(["crd", "deployment", "role", "configmap"]))
        if kind == "crd":
            docs.append(large_crd("example.com", f"K{name.replace('-', '')}", draw(st.integers(1, 8))))
        elif kind == "deployment":
            docs.append(gpu_deployment(name))
        elif kind == "role":
            rules = "".join(f"- apiGroups: ['']\n  resources: [r{i}]\n  verbs: [get]\n" for i in range(200))
            docs.append(
                f"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: {name}\nrules:\n{rules}"
            )
        else:
            docs.append(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{a: '{'x' * 5000}'}}\n")
    source = "# Source: c/templates/x.yaml\n" if draw(st.booleans()) else ""
    return "".join(f"---\n{source}{doc}" for doc in docs)


@settings(max_examples=60, deadline=None)
@given(_streams())
def test_cutting_keeps_lines_headers_and_every_object_rules_read(text: str) -> None:
    cut, count = strip_unread(text, _unread)
    assert cut.count("\n") == text.count("\n")
    before = list(yaml.safe_load_all(text))
    after = list(yaml.safe_load_all(cut))
    assert len(before) == len(after)
    cut_docs = 0
    for whole, kept in zip(before, after, strict=True):
        if kept == whole:
            continue
        cut_docs += 1
        assert _unread(whole["apiVersion"], whole["kind"])
        assert {k: whole[k] for k in ("apiVersion", "kind", "metadata")} == kept
    assert cut_docs == count


def test_a_file_someone_wrote_is_cut_only_where_the_loader_would_report_nothing() -> None:
    """Plain files (`checked`): a CRD whose body repeats a key, holds an alias or does not parse is kept whole, so
    the loader still reports it (KG003, KG005, KG001); a clean one is cut."""
    crd = large_crd("example.com", "Thing", 8)
    clean = strip_unread(crd, _unread, checked=True)
    assert clean[1] == 1
    repeated = crd.replace("  scope: Namespaced\n", "  scope: Namespaced\n  scope: Cluster\n")
    aliased = crd.replace("  scope: Namespaced\n", "  scope: &s Namespaced\n  preserveUnknownFields: *s\n")
    broken = crd.replace("  scope: Namespaced\n", "  scope: [Namespaced\n")
    for text in (repeated, aliased, broken):
        assert strip_unread(text, _unread, checked=True) == (text, 0)
    problems = load_text("crd.yaml", strip_unread(repeated, _unread, checked=True)[0]).problems
    assert [p.code for p in problems] == ["duplicate-key"]


def test_each_distinct_document_is_checked_once_per_run() -> None:
    """`known` (the run's answers): a CRD copied into several files is parsed once, and a copy with a repeated key is
    still kept whole."""
    crd = large_crd("example.com", "Thing", 8)
    repeated = crd.replace("  scope: Namespaced\n", "  scope: Namespaced\n  scope: Cluster\n")
    known: dict[bytes, bool] = {}
    calls: list[str] = []
    real = unread_module._well_formed

    def counting(chunk: str) -> bool:
        calls.append(chunk)
        return real(chunk)

    with mock.patch.object(unread_module, "_well_formed", counting):
        answers = [
            strip_unread(text, _unread, checked=True, known=known) for text in (crd, crd, repeated, crd, repeated)
        ]
    assert [cut for _text, cut in answers] == [1, 1, 0, 1, 0]
    assert calls == [crd, repeated] and sorted(known.values()) == [False, True]


def test_lint_reports_a_repeated_key_inside_a_large_crd(tmp_path: Path) -> None:
    from kubegpu.lint import LintConfig, lint_paths

    crd = large_crd("example.com", "Thing", 64).replace("  scope: Namespaced\n", "  scope: Namespaced\n  scope: X\n")
    (tmp_path / "crds.yaml").write_text(f"{crd}---\n{large_crd('example.com', 'Other', 64)}---\n{gpu_deployment('a')}")
    result = lint_paths([str(tmp_path)], LintConfig(), jobs=1, keep_documents=False)
    assert sorted(f.code for f in result.findings) == ["KG003", "KG201"]
    assert result.documents == 3


_plain = st.text(alphabet="abxy01 -:[]{}&*,'\"#\n", max_size=6)
_yaml_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), _plain),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)),
    max_leaves=12,
)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, str]:
    """Block or flow YAML, then maybe edited by hand (a key repeated, an anchor and alias, the text cut short), and
    which edit was made."""
    text = yaml.safe_dump({"top": draw(_yaml_values)}, default_flow_style=draw(st.booleans()))
    lines = text.splitlines(keepends=True)
    edit = draw(st.sampled_from(["none", "repeat", "alias", "cut"]))
    if edit == "repeat":
        line = draw(st.sampled_from(lines))
        lines.insert(draw(st.integers(0, len(lines))), line)
    elif edit == "alias":
        lines.append("again: *x\n" if draw(st.booleans()) else "anchored: &x 1\nagain: *x\n")
    elif edit == "cut":
        text = "".join(lines)
        return text[: draw(st.integers(0, len(text)))], edit
    return "".join(lines), edit


@settings(max_examples=400, deadline=None)
@given(_documents())
def test_well_formed_means_the_loader_reports_nothing(case: tuple[str, str]) -> None:
    """A document is cut only when the loader would read it clean; what a YAML library writes is always cut."""
    text, edit = case
    clean = unread_module._well_formed(text)
    if clean:
        assert load_text("doc.yaml", text).problems == []
    if edit == "none":
        assert clean
    if edit == "alias" or load_text("doc.yaml", text).problems:
        assert not clean
