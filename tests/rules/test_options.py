"""Rule options: each validator accepts exactly what it documents, every declaration is consistent, and every
command that reads kubegpu.toml refuses a wrong value in one line naming file, line, rule and option (exit 2)."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kubegpu.cli.main import app
from kubegpu.errors import ConfigError
from kubegpu.lint import LintConfig, all_rules, lint_text
from kubegpu.lint.config import load_config, parse_config
from kubegpu.lint.docs import options_doc
from kubegpu.ruleapi.options import (
    OptionValueError,
    byte_sizes,
    label_key,
    label_keys,
    positive_number,
    quantity_above,
    queue_name,
    regular_expressions,
    whole_number,
)
from tests.paths import REPO_ROOT

DATA = Path(__file__).parent / "data"
MI = 2**20
runner = CliRunner()
EVERY_OPTION = [(rule, option) for rule in all_rules() for option in rule.options]


def _refused(parse: Any, value: object) -> bool:
    try:
        parse(value)
    except OptionValueError:
        return True
    return False


# --- label keys: kubernetes apimachinery's own cases ---

_QUALIFIED = json.loads((DATA / "qualified_names.json").read_text())


@pytest.mark.parametrize("key", _QUALIFIED["valid"])
def test_upstream_valid_label_keys_are_accepted(key: str) -> None:
    assert label_key(key) == key


@pytest.mark.parametrize("key", _QUALIFIED["invalid"])
def test_upstream_invalid_label_keys_are_refused(key: str) -> None:
    assert _refused(label_key, key)


def test_label_key_lists_are_lists() -> None:
    assert label_keys(["example.com/rack", "block"]) == ("example.com/rack", "block")
    assert _refused(label_keys, "example.com/rack,block")  # a string is not a list
    assert _refused(label_keys, ["example.com/rack", "Bad Key"])


# --- properties of the validators ---


@given(st.integers(-(2**70), 2**70), st.integers(0, 16), st.integers(0, 16))
def test_whole_number_accepts_exactly_its_range(value: int, low: int, span: int) -> None:
    parse = whole_number(low, low + span)
    if low <= value <= low + span:
        assert parse(value) == value and parse(parse(value)) == value
    else:
        assert _refused(parse, value)


@given(st.one_of(st.booleans(), st.floats(), st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=2)))
def test_whole_number_refuses_what_is_not_a_toml_integer(value: object) -> None:
    assert _refused(whole_number(0, 8), value)


@given(st.one_of(st.integers(-(10**6), 10**6), st.integers(), st.floats()), st.booleans())
def test_positive_number_accepts_finite_numbers_above_zero(value: float, allow_zero: bool) -> None:
    parse = positive_number(allow_zero)
    try:
        as_float = float(value)
    except OverflowError:  # an integer no float holds
        as_float = math.inf
    ok = math.isfinite(as_float) and (as_float > 0 or (allow_zero and as_float == 0))
    if ok:
        assert parse(value) == float(value) and parse(parse(value)) == float(value)
    else:
        assert _refused(parse, value)


def test_positive_number_refuses_what_no_float_holds() -> None:
    assert _refused(positive_number(), 10**400) and _refused(positive_number(), True)
    assert _refused(positive_number(), "0.31") and positive_number()(1) == 1.0


@given(st.integers(0, 2**40))
def test_quantity_above_compares_bytes(size: int) -> None:
    parse = quantity_above(64 * MI, "64Mi")
    if size > 64 * MI:
        assert parse(size) == str(size) and parse(parse(size)) == str(size)
    else:
        assert _refused(parse, size)


@given(st.integers(0, 10**6), st.sampled_from([("Ki", 2**10), ("Mi", MI), ("Gi", 2**30), ("M", 10**6), ("", 1)]))
def test_quantity_above_reads_suffixes(number: int, suffix: tuple[str, int]) -> None:
    parse = quantity_above(64 * MI, "64Mi")
    text = f"{number}{suffix[0]}"
    if number * suffix[1] > 64 * MI:
        assert parse(text) == text
    else:
        assert _refused(parse, text)


@pytest.mark.parametrize("value", [True, None, 1.5e9, "lots", "16 Gi", "-16Gi", ["16Gi"], {"size": "16Gi"}])
def test_quantity_above_refuses_what_is_not_a_quantity(value: object) -> None:
    assert _refused(quantity_above(64 * MI, "64Mi"), value)


@given(st.dictionaries(st.text(min_size=1, max_size=20), st.integers(1, 2**50), max_size=4))
def test_byte_sizes_keep_positive_byte_counts(sizes: dict[str, int]) -> None:
    assert byte_sizes(sizes) == sizes and byte_sizes(byte_sizes(sizes)) == sizes
    assert byte_sizes({key: f"{value}" for key, value in sizes.items()}) == sizes


@given(st.text(min_size=1, max_size=10), st.integers(-(2**20), 0))
def test_byte_sizes_refuse_empty_sizes(key: str, size: int) -> None:
    assert _refused(byte_sizes, {key: size})
    assert _refused(byte_sizes, {key: True})
    assert byte_sizes({key: "60G"}) == {key: 60 * 10**9}


@given(st.lists(st.text(max_size=12), max_size=4))
def test_regular_expressions_accept_any_escaped_text(texts: list[str]) -> None:
    patterns = [re.escape(text) for text in texts]
    assert regular_expressions(patterns) == tuple(patterns)
    assert regular_expressions(regular_expressions(patterns)) == tuple(patterns)


@pytest.mark.parametrize("value", ["build-[0-9]+", ["build-[0-9"], ["(unclosed"], [1], None])
def test_regular_expressions_refuse_a_string_and_broken_patterns(value: object) -> None:
    assert _refused(regular_expressions, value)


_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")  # apimachinery IsValidLabelValue


@given(st.one_of(st.text(max_size=70), st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,70}[a-z0-9])?", fullmatch=True)))
def test_a_queue_name_is_a_lowercase_label_value(text: str) -> None:
    if _refused(queue_name, text):
        return
    assert text and len(text) <= 63 and text == text.lower() and _LABEL_VALUE.fullmatch(text)
    assert ".." not in text and "_" not in text and queue_name(text) == text


def test_queue_names() -> None:
    assert queue_name("team-a") == "team-a" and queue_name("ml.research") == "ml.research"
    for bad in ("Team-A", "team a", "-team", "team-", "", "a" * 64, "a..b", 3):
        assert _refused(queue_name, bad), bad


# --- every declared option ---


@pytest.mark.parametrize(("rule", "option"), EVERY_OPTION, ids=[f"{r.name}.{o.name}" for r, o in EVERY_OPTION])
def test_each_option_declaration_is_consistent(rule: Any, option: Any) -> None:
    example = tomllib.loads(f"x = {option.example}")["x"]
    value = option.parse(example)
    assert option.parse(value) == value  # a checked configuration checks again unchanged
    if option.default is not None:
        assert option.parse(option.default) == option.default
    assert option.help and option.expected and option.name in option.doc
    config = LintConfig(options={rule.name: {option.name: example}})  # the example is a valid configuration
    assert config.options[rule.name][option.name] == value
    with pytest.raises(
        ConfigError, match=rf"\[rules.{rule.name}\] {option.name}: expected {re.escape(option.expected)}"
    ):
        LintConfig(options={rule.name: {option.name: ["surely", "not", {"valid": True}]}})


def test_an_api_configuration_is_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"no rule is named 'dshm-mising'; did you mean dshm-missing\?"):
        LintConfig(options={"dshm-mising": {"size-limit": "8Gi"}})
    with pytest.raises(ConfigError, match="dshm-missing has no option 'size'; its options: size-limit"):
        LintConfig(options={"KG201": {"size": "8Gi"}})
    assert LintConfig(options={"KG201": {"size-limit": 2**31}}).options == {
        "dshm-missing": {"size-limit": "2147483648"}
    }


def test_a_checked_option_changes_what_the_rule_reports() -> None:
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
        "    image: nvcr.io/nvidia/pytorch:24.05-py3\n"
        "    resources: {limits: {cpu: '7', memory: 8Gi, nvidia.com/gpu: 1}}\n"
    )
    assumed = lint_text("p.yaml", pod, LintConfig(select=("KG103",))).findings
    assert [f.name for f in assumed] == ["gpu-cpu-not-smt-multiple"] and "assumed" in assumed[0].message
    grace = LintConfig(select=("KG103",), options={"gpu-cpu-not-smt-multiple": {"threads-per-core": 1}})
    assert lint_text("p.yaml", pod, grace).findings == []


# --- every command that reads kubegpu.toml ---

_GPU_JOB = str(REPO_ROOT / "examples" / "train-pytorchjob.yaml")
COMMANDS = [
    ["lint", _GPU_JOB],
    ["fix", _GPU_JOB, "--check"],
    ["gen", "dshm", "--for", _GPU_JOB],
    ["gen", "fixes", "--for", _GPU_JOB],
    ["audit", "--cluster"],  # refused before any cluster is read
    ["webhook", "serve", "--tls-cert", "missing.crt", "--tls-key", "missing.key"],  # refused before it serves
]
BAD_VALUES = [
    (
        '[rules.dshm-missing]\nsize-limit = "64Mi"\n',
        2,
        "size-limit: expected a quantity above 64Mi",
        '"64Mi" (not above 64Mi)',
    ),
    ("[rules.dshm-unsized]\nsize-limit = 1\n", 2, "[rules.dshm-unsized] size-limit", "got 1 (not above 64Mi)"),
    (
        '# GPU nodes\n\n[rules.KG103]\nthreads-per-core = "two"\n',
        4,
        "expected a whole number from 1 to 8",
        '"two" (a string)',
    ),
    ("[rules.gpu-cpu-not-smt-multiple]\nthreads-per-core = 0\n", 2, "threads-per-core", "got 0 (out of range)"),
    ("[rules.gang-missing]\nqueue = 5\n", 2, "queue: expected a LocalQueue name", "got 5 (a whole number)"),
    ('[rules.topology-missing]\ntopology-labels = "rack,block"\n', 2, "a list of node label keys", "(a string)"),
    (
        '[rules.image-tag-mutable]\nimmutable-tags = ["build-[0-9"]\n',
        2,
        "a list of regular expressions",
        "not a regular",
    ),
    ("[rules]\nstartup-probe-too-short = { load-gbps = 0 }\n", 2, "load-gbps: expected a number of GB/s", "0 (out"),
    ('[rules.startup-probe-too-short.model-sizes]\n"acme/m" = "big"\n', 1, "model-sizes", '"acme/m" is not a quantity'),
    ('[rules.dshm-missing]\nsize = "8Gi"\n', 2, "dshm-missing has no option 'size'; its options: size-limit", ""),
    ('[rules.dshm-mising]\nsize-limit = "8Gi"\n', 1, "no rule is named 'dshm-mising'; did you mean dshm-missing?", ""),
]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
@pytest.mark.parametrize(("text", "line", "what", "got"), BAD_VALUES, ids=[b[2][:30] for b in BAD_VALUES])
def test_every_command_refuses_a_wrong_option_in_one_line(
    tmp_path: Path, command: list[str], text: str, line: int, what: str, got: str
) -> None:
    config = tmp_path / "kubegpu.toml"
    config.write_text(text)
    result = runner.invoke(app, [*command, "--config", str(config)])
    assert result.exit_code == 2, result.output
    [message] = result.output.strip().splitlines()
    assert message.startswith(f"kubegpu: error: {config}:{line}: "), message
    assert what in message and got in message, message


def test_pyproject_options_are_checked_with_their_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.kubegpu.rules.dshm-missing]\nsize-limit = "32Mi"\n'
    )
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n")
    result = runner.invoke(app, ["lint", str(tmp_path / "pod.yaml")])
    assert result.exit_code == 2 and "pyproject.toml:5: [rules.dshm-missing] size-limit" in result.output


def test_the_configuration_page_lists_every_option() -> None:
    page = (REPO_ROOT / "docs" / "configuration.md").read_text()
    assert options_doc() in page, "docs/configuration.md is stale: run `make docs`"
    for rule, option in EVERY_OPTION:
        assert f"[rules.{rule.name}]" in page and f"`{option.name}`" in page


@pytest.mark.parametrize("page", ["docs/configuration.md", "docs/commands/lint.md"])
def test_documented_configurations_are_valid(page: str) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", (REPO_ROOT / page).read_text(), re.DOTALL)
    assert blocks
    for block in blocks:
        parse_config(tomllib.loads(block), page, all_rules(), block)


_KEYS = st.sampled_from(
    [
        *("select", "ignore", "severity", "rules", "fail-on", "accelerator-resources", "max-file-size", "helm"),
        *("extend-exclude", "respect-gitignore", "force-exclude", "charts", "values", "set", "release"),
        *("KG201", "dshm-missing", "gang-missing", "size-limit", "queue", "threads-per-core", "model-sizes", "x"),
    ]
)
_LEAVES = st.one_of(
    st.booleans(),
    st.integers(-3, 2**40),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.sampled_from(["KG1", "error", "8Gi", "dshm-missing", "team-a"]),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_any_configuration_is_read_or_refused_with_a_config_error(table: dict[str, Any]) -> None:
    """Whatever TOML holds, reading it gives a configuration or a ConfigError (one line), never another exception."""
    try:
        parse_config(table, "kubegpu.toml", all_rules())
    except ConfigError as err:
        assert "\n" not in str(err)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\nseverity = 1\n", "kubegpu.toml:2: [severity] must be a table"),
        ('[severity]\nKG201 = "loud"\n', "kubegpu.toml:2: [severity] KG201: severity 'loud' is not one of"),
        ('fail-on = "eror"\n', "kubegpu.toml:1: 'fail-on': severity 'eror' is not one of"),
        ("max-file-size = true\n", "kubegpu.toml:1: 'max-file-size' must be a positive whole number of bytes"),
        ('respect-gitignore = "yes"\n', "kubegpu.toml:1: 'respect-gitignore' must be true or false; got \"yes\""),
        ('select = []\n\nfail_on = "error"\n', "kubegpu.toml:3: unknown setting 'fail_on'; did you mean fail-on?"),
        ("[helm]\ncharts = 3\n", "kubegpu.toml:1: [helm.charts] must be a table of chart folders"),
        ("[rules]\ndshm-missing = 3\n", "kubegpu.toml:2: [rules.dshm-missing] must be a table of the rule's options"),
    ],
)
def test_settings_errors_name_their_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "kubegpu.toml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "kubegpu.toml", all_rules())
    assert str(caught.value).startswith(f"{tmp_path}/{message}"), str(caught.value)
