"""Rule lists on the command line and in the configuration: comma-separated and repeated values, as in ruff.

Every option that takes rule codes or names (`lint` and `fix` --select/--ignore, `gen webhook` --select/--ignore,
`explain`) reads `A,B` the same as `A B` repeated; one mistyped item is named, with its close match, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.lint import all_rules
from kubegpu.lint.config import split_rule_names
from kubegpu.lint.config_lines import key_line

runner = CliRunner()
# One GPU pod with several findings: no /dev/shm, not Guaranteed, a mutable image tag, ...
GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:latest
    resources:
      limits: {nvidia.com/gpu: 1, memory: 64Gi}
"""


def _rules_found(tmp_path: Path, *args: str) -> set[str]:
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    result = runner.invoke(app, ["lint", str(tmp_path / "pod.yaml"), "--format", "json", "--exit-zero", *args])
    assert result.exit_code == 0, result.output
    return {f["name"] for f in json.loads(result.stdout)["findings"]}


def test_lint_reads_comma_separated_and_repeated_selections_alike(tmp_path: Path) -> None:
    every = _rules_found(tmp_path)
    assert {"dshm-missing", "image-tag-mutable"} <= every and len(every) > 2
    comma = _rules_found(tmp_path, "--select", "dshm-missing,image-tag-mutable")
    assert comma == {"dshm-missing", "image-tag-mutable"}
    assert _rules_found(tmp_path, "--select", "dshm-missing", "--select", "image-tag-mutable") == comma
    assert _rules_found(tmp_path, "--select", " dshm-missing , KG3,", "--select", "image-tag-mutable") >= comma
    ignored = _rules_found(tmp_path, "--ignore", "dshm-missing,image-tag-mutable")
    assert ignored == every - comma
    assert _rules_found(tmp_path, "--ignore", "dshm-missing", "--ignore", "image-tag-mutable") == ignored


@pytest.mark.parametrize("command", ["lint", "fix"])
@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_one_mistyped_item_of_a_list_is_named_with_its_close_match(tmp_path: Path, command: str, option: str) -> None:
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    result = runner.invoke(app, [command, str(tmp_path / "pod.yaml"), option, "gang-missing,dshm-mising,KG1"])
    assert result.exit_code == 2, result.output
    assert f"{option} names unknown rule 'dshm-mising'; did you mean dshm-missing?" in result.output
    assert "gang-missing" not in result.output and "KG1" not in result.output
    assert (tmp_path / "pod.yaml").read_text() == GPU_POD  # fix wrote nothing


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_a_value_that_names_no_rule_is_an_error(tmp_path: Path, value: str) -> None:
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    result = runner.invoke(app, ["lint", str(tmp_path / "pod.yaml"), "--select", value])
    assert result.exit_code == 2 and "--select" in result.output and "names no rule" in result.output


def test_fix_applies_only_the_listed_rules(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(GPU_POD)
    result = runner.invoke(app, ["fix", str(pod), "--select", "dshm-missing,gpu-pod-not-guaranteed", "--exit-zero"])
    assert result.exit_code == 0, result.output
    fixed = yaml.safe_load(pod.read_text())
    assert fixed["spec"]["volumes"][0]["emptyDir"]["medium"] == "Memory"
    assert fixed["spec"]["containers"][0]["image"].endswith(":latest")  # not in the selection


def test_explain_prints_each_rule_of_a_list() -> None:
    result = runner.invoke(app, ["explain", "KG201,dshm-unsized", "gang-missing"])
    assert result.exit_code == 0, result.output
    titles = [line for line in result.output.splitlines() if line.startswith("# KG")]
    assert titles == ["# KG201 dshm-missing", "# KG202 dshm-unsized", "# KG501 gang-missing"]
    bad = runner.invoke(app, ["explain", "KG201,dshm-unsize"])
    assert bad.exit_code == 2 and "no rule named 'dshm-unsize'; did you mean dshm-unsized?" in bad.output


def test_gen_webhook_reads_rule_lists() -> None:
    args = ["gen", "webhook", "--image", "example.com/kubegpu:1.0", "--no-namespace-object"]
    result = runner.invoke(app, [*args, "--select", "KG2,KG5", "--ignore", "KG201", "--ignore", "KG202,KG203"])
    assert result.exit_code == 0, result.output
    config = next(d for d in yaml.safe_load_all(result.output) if d and d["kind"] == "ConfigMap")
    assert config["data"]["kubegpu.toml"] == 'select = ["KG2","KG5"]\nignore = ["KG201","KG202","KG203"]\n'
    bad = runner.invoke(app, [*args, "--select", "KG2,gang-mising"])
    assert bad.exit_code == 2 and "'gang-mising'; did you mean gang-missing?" in bad.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'fail-on = "error"\nselect = "KG1,dshm-missing"\n',
            "kubegpu.toml:2: 'select' must be a list of strings, not a string: "
            'write select = ["KG1", "dshm-missing"]',
        ),
        (
            'ignore = "KG002"\n',
            """kubegpu.toml:1: 'ignore' must be a list of strings, not a string: write ignore = ["KG002"]""",
        ),
        (
            '\n\nignore = [\n  "KG1,dshm-missing",\n]\n',
            "kubegpu.toml:3: 'ignore' names unknown rule 'KG1,dshm-missing'; one rule per item: "
            'write ignore = ["KG1", "dshm-missing"]',
        ),
        ('select = ["gang-mising"]\n', "kubegpu.toml:1: 'select' names unknown rule 'gang-mising'; did you mean"),
        ("extend-exclude = 3\n", """kubegpu.toml:1: 'extend-exclude' must be a list of strings, like"""),
    ],
)
def test_config_lists_given_as_strings_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "kubegpu.toml").write_text(text)
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    for command in ("lint", "fix"):
        result = runner.invoke(app, [command, str(tmp_path / "pod.yaml")])
        assert result.exit_code == 2, result.output
        assert message in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1


def test_a_pyproject_error_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.kubegpu]\nselect = "KG1"\n')
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    result = runner.invoke(app, ["lint", str(tmp_path / "pod.yaml")])
    assert result.exit_code == 2 and "pyproject.toml:5: 'select' must be a list of strings" in result.output


_NAMES = st.sampled_from([r.name for r in all_rules()] + [r.code for r in all_rules()] + ["KG1", "ALL"])


@given(st.lists(st.lists(_NAMES, min_size=1, max_size=4), min_size=1, max_size=4), st.sampled_from(["", " ", "  "]))
def test_splitting_keeps_every_item_in_order(groups: list[list[str]], pad: str) -> None:
    values = [",".join(f"{pad}{name}{pad}" for name in group) + pad + "," for group in groups]
    assert split_rule_names(values) == tuple(name for group in groups for name in group)


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        ('a = 1\n[rules.dshm-missing]\nsize-limit = "1"\n', ("rules", "dshm-missing", "size-limit"), 3),
        ('[rules."dshm-missing"]\n# c\n  "size-limit" = 1\n', ("rules", "dshm-missing", "size-limit"), 3),
        ("[rules]\ndshm-missing.size-limit = 1\n", ("rules", "dshm-missing", "size-limit"), 2),
        ('[rules]\ndshm-missing = { size-limit = "x" }\n', ("rules", "dshm-missing", "size-limit"), 2),
        ("rules.dshm-missing.size-limit = 1\n", ("rules", "dshm-missing", "size-limit"), 1),
        ("[tool.kubegpu.rules.gang-missing]\nqueue = 1\n", ("tool", "kubegpu", "rules", "gang-missing", "queue"), 2),
        ("[tool.kubegpu]\nselect = 1\n", ("tool", "kubegpu", "rules", "gang-missing", "queue"), 1),
        ("[other]\nselect = 1\n", ("select",), None),
        ("select = [\n 'a = 1',\n]\n[severity]\nselect = 2\n", ("select",), 1),
    ],
)
def test_key_line_finds_where_a_key_is_set(text: str, path: tuple[str, ...], line: int | None) -> None:
    assert key_line(text, path) == line


@pytest.mark.parametrize("command", [["lint"], ["fix", "--check"]])
def test_a_mistyped_fail_on_gets_its_close_match(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    args = [*command, str(tmp_path / "pod.yaml"), "--fail-on"]
    result = runner.invoke(app, [*args, "eror"])
    assert result.exit_code == 2
    assert "--fail-on 'eror' is not one of info, warning, error; did you mean error?" in result.output
    assert runner.invoke(app, [*args, "INFO"]).exit_code == 1  # case-insensitive; the pod has warnings


@pytest.mark.parametrize(
    "args", [["lint", ".", "--select", "dshm"], ["lint", ".", "--ignore", "dshm"], ["explain", "dshm"]]
)
def test_a_word_that_starts_rule_names_lists_them(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "did you mean one of dshm-missing (KG201), dshm-unsized (KG202), dshm-host-shared (KG203)?" in result.output
