"""Named node presets (data files in topology/presets/) and `--node` resolution: preset or file.

Every `--node` option, `kubegpu nodes` and the probe's output go through one profile schema
(docs/node-profile.md); a preset file is either that schema or a compact description (layout.py).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from kubegpu.errors import InputError
from kubegpu.manifests.loader import refuse_alias_bomb
from kubegpu.manifests.sources import read_text
from kubegpu.topology.layout import expand
from kubegpu.topology.model import NodeTopology

_SUFFIXES = (".yaml", ".yml", ".json")


def _preset_files() -> dict[str, Any]:
    folder = resources.files("kubegpu.topology").joinpath("presets")
    found: dict[str, Any] = {}
    for entry in folder.iterdir():
        name = entry.name
        for suffix in _SUFFIXES:
            if name.endswith(suffix):
                found[name[: -len(suffix)]] = entry
    return found


def preset_names() -> list[str]:
    """The names of every bundled preset, sorted."""
    return sorted(_preset_files())


@lru_cache(maxsize=64)
def load_preset(name: str) -> NodeTopology:
    """The bundled preset `name`; InputError listing the known names when there is none."""
    files = _preset_files()
    if name not in files:
        raise InputError(f"unknown node preset {name!r}; known presets: {', '.join(sorted(files))}")
    entry = files[name]
    text = entry.read_text(encoding="utf-8")
    where = f"presets/{entry.name}"
    return expand(parse_profile_text(text, where), source=where)


def load_node(spec: str) -> NodeTopology:
    """A `--node` value: a preset name, or a path to a JSON/YAML profile or preset description."""
    if spec in _preset_files():
        return load_preset(spec)
    path = Path(spec)
    if not path.exists():
        raise InputError(
            f"no node preset or profile file named {spec!r} (presets: {', '.join(preset_names())}; see `kubegpu nodes`)"
        )
    text = read_text(spec, path, "profile", "cannot read node profile: ")  # a FIFO or a device: refused, not waited on
    return expand(parse_profile_text(text, spec), source=spec)


def parse_profile_text(text: str, source: str) -> dict[str, Any]:
    """Parse JSON or YAML profile text to a mapping; InputError with the line on a syntax error."""
    data: Any
    if source.endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"invalid JSON: {err.msg}", file=source, line=err.lineno) from err
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            line = None if mark is None else int(mark.line) + 1
            problem = getattr(err, "problem", None) or str(err).splitlines()[0]
            raise InputError(f"invalid YAML: {problem}", file=source, line=line) from err
        refuse_alias_bomb(data, text, source)
    if not isinstance(data, dict):
        raise InputError("a node profile must be a mapping with 'cpus' (or 'cpu')", file=source)
    return data
