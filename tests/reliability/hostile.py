"""Hostile inputs for the reliability tests and `make fuzz`: every path of the rule case tables, replaced by
values of every YAML shape (strings, numbers, huge numbers, lists, maps, null), and a seeded text mutator."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CASES_DIR = Path(__file__).parent.parent / "rules" / "cases"
FIXTURES_DIR = Path(__file__).parent.parent / "fix" / "fixtures"

HOSTILE_VALUES: tuple[Any, ...] = (
    None,
    "",
    "none",
    "0-4294967295",
    "1e999",
    "-1Gi",
    "9" * 40,
    "\u202e\ud7ff",
    0,
    -1,
    5,
    10**30,
    -(10**30),
    1.5,
    1e308,
    float("nan"),
    float("inf"),
    True,
    False,
    [],
    [None],
    [1, "x", {}],
    {},
    {"a": 1},
    {"": None},
    {"name": 5, "image": [], "resources": "x"},
    [[[]]],
)
Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class CaseInput:
    """One YAML input of a rule case: its table, case, which field (manifest or kubelet_config) and the text."""

    table: str
    case: dict[str, Any]
    field: str
    text: str

    @property
    def label(self) -> str:
        return f"{self.table}:{self.case['name']}:{self.field}"


def case_inputs() -> list[CaseInput]:
    """Every manifest and kubelet configuration of every case table, in a stable order."""
    out: list[CaseInput] = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        table = yaml.safe_load(path.read_text())
        for case in table.get("cases") or ():
            for field in ("manifest", "kubelet_config"):
                text = case.get(field)
                if isinstance(text, str):
                    out.append(CaseInput(path.name, case, field, text))
    return out


def fixture_texts() -> list[tuple[str, str]]:
    """The fix fixtures' input manifests (name, text)."""
    return [
        (str(p.relative_to(FIXTURES_DIR)), p.read_text())
        for p in sorted(FIXTURES_DIR.glob("*/before/*"))
        if p.suffix in (".yaml", ".yml", ".json")
    ]


def paths_of(data: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path below `data` (not the root itself), parents before children."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*prefix, key)
            yield from paths_of(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield (*prefix, i)
            yield from paths_of(value, (*prefix, i))


def replaced(data: Any, path: Path_, value: Any) -> Any:
    """A deep copy of `data` with the node at `path` replaced by `value`."""
    out = copy.deepcopy(data)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = copy.deepcopy(value)
    return out


def dump(docs: list[Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)


def hostile_variants(text: str, values: tuple[Any, ...] = HOSTILE_VALUES) -> Iterator[tuple[str, str]]:
    """(description, text) for every path of every document in `text` and every value in `values`."""
    if "*" in text:  # aliases (an alias-bomb case among them): the shared nodes would multiply the variants
        return
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:  # a case about unreadable input: nothing to vary
        return
    for index, doc in enumerate(docs):
        for path in paths_of(doc):
            for value in values:
                mutated = list(docs)
                mutated[index] = replaced(doc, path, value)
                yield f"doc {index} {'.'.join(map(str, path))} = {value!r:.40}", dump(mutated)


_SNIPPETS = (
    "\n",
    "\r",
    "\r\n",
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "&a ",
    "*a",
    "!!str ",
    "!!binary ",
    "<<: *a\n",
    "---\n",
    "...\n",
    "#",
    "'",
    '"',
    "\\",
    "\t",
    "  ",
    "0-4294967295",
    "1e999",
    "null",
    "~",
    "\x00",
    "\ufeff",
    "\u2028",
    "9" * 30,
    "nvidia.com/gpu: 1\n",
    "kind: List\nitems:\n",
)


def mutate(text: str, rng: random.Random, edits: int = 3) -> str:
    """A few random byte-level edits: insert a YAML-significant snippet, delete, duplicate or swap lines."""
    for _ in range(edits):
        choice = rng.randrange(5)
        pos = rng.randrange(len(text) + 1)
        if choice == 0:
            text = text[:pos] + rng.choice(_SNIPPETS) + text[pos:]
        elif choice == 1:
            text = text[:pos] + text[pos + rng.randrange(1, 20) :]
        elif choice == 2:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            lines.insert(i, lines[rng.randrange(len(lines))])
            text = "\n".join(lines)
        elif choice == 3:
            lines = text.split("\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        else:
            text = text[:pos] + text[pos : pos + rng.randrange(1, 200)] * rng.randrange(1, 4) + text[pos:]
    return text
