"""What a kustomization reads, checked before kustomize runs: every file and folder it names must lie in the lint
root (kustomize itself lets a base be any folder), and remote resources (URLs, git repositories) are refused
unless `--allow-remote`. Field names follow kustomize v5.5's Kustomization type (api/types/kustomization.go).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from kubegpu.manifests.loader import C_SAFE_LOADER
from kubegpu.manifests.regular_file import read_regular
from kubegpu.manifests.roots import Root, display

MAX_KUSTOMIZATIONS = 1000  # bases, overlays and components one build may reach
MAX_REFERENCES = 10_000  # names one kustomization file may hold

# Fields whose entries may be another kustomization (a folder) or a remote resource.
_FOLDER_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")
_FILE_LISTS = ("crds", "configurations", "patchesStrategicMerge")
_PATH_ITEMS = ("patches", "patchesJson6902", "replacements")  # items with a `path`
_GENERATORS = ("configMapGenerator", "secretGenerator", "helmChartInflationGenerator")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_GIT_FORMS = ("git@", "git::", "gh:", "github.com/", "gitlab.com/", "bitbucket.org/")


@dataclass(frozen=True)
class Refusal:
    """Why a kustomization is not built, and the file and line that say so."""

    file: Path
    line: int
    message: str

    def notice(self) -> str:
        return f"not rendered: {display(self.file)}:{self.line}: {self.message}"


def kustomization_file(folder: Path) -> Path | None:
    from kubegpu.manifests.sources import KUSTOMIZATION_FILES  # sources imports roots, as this module does

    return next((folder / n for n in KUSTOMIZATION_FILES if (folder / n).is_file()), None)


def read_kustomization(folder: Path, max_bytes: int) -> tuple[Path, yaml.Node | None] | None:
    """The kustomization file of `folder` and its YAML node tree (None when it does not parse: kustomize says
    what is wrong with it); None when the folder holds none or it cannot be read."""

    file = kustomization_file(folder)
    if file is None:
        return None
    try:
        return file, yaml.compose(read_regular(file, max_bytes).decode("utf-8", "replace"), Loader=C_SAFE_LOADER)
    except OSError:
        return None
    except yaml.YAMLError:
        return file, None


def is_component(node: yaml.Node | None) -> bool:
    """A kustomization of `kind: Component`, which kustomize builds only under `components:` of another."""
    kind = _get(node, "kind")
    return isinstance(kind, yaml.ScalarNode) and kind.value == "Component"


def included_folders(folder: Path, node: yaml.Node | None) -> list[Path]:
    """The local folders (links resolved) that a kustomization builds on: its `resources`, `bases` and
    `components` entries that are folders; remote entries and files are left out."""
    here = Path(os.path.realpath(folder))
    found: list[Path] = []
    for count, (field, value, _line) in enumerate(_references(node)):
        if count >= MAX_REFERENCES:
            break
        local = not value.lower().startswith("file:") and not _remote(value, here)
        if field in ("resources", "bases", "components") and local:
            target = Path(os.path.realpath(here / value))
            if target.is_dir():
                found.append(target)
    return found


def check(folder: Path, root: Root, allow_remote: bool, max_bytes: int) -> Refusal | None:
    """The first reference of `folder`'s kustomization, or of one it builds on, that leaves `root` or is
    remote (unless allowed); None when the build reads only files in the root."""
    queue = [Path(os.path.realpath(folder))]
    seen: set[Path] = set()
    while queue:
        here = queue.pop()
        if here in seen:
            continue
        seen.add(here)
        if len(seen) > MAX_KUSTOMIZATIONS:
            return Refusal(folder, 1, f"it builds on more than {MAX_KUSTOMIZATIONS} kustomizations")
        read = read_kustomization(here, max_bytes)
        if read is None or read[1] is None:
            continue  # kustomize says what is wrong with it
        file, node = read
        for count, (field, value, line) in enumerate(_references(node)):
            if count >= MAX_REFERENCES:
                return Refusal(file, line, f"it names more than {MAX_REFERENCES} files")
            refusal = _refused(value, field, here, file, line, root, allow_remote)
            if refusal is not None:
                return refusal
            if field in _FOLDER_FIELDS and not _remote(value, here):
                target = Path(os.path.realpath(here / value))
                if target.is_dir():
                    queue.append(target)
    return None


def _refused(
    value: str, field: str, here: Path, file: Path, line: int, root: Root, allow_remote: bool
) -> Refusal | None:
    if value.lower().startswith("file:"):
        return Refusal(file, line, f"{field} names {value!r}, a file URL: lint reads nothing outside the lint root")
    if _remote(value, here):
        if allow_remote:
            return None
        return Refusal(
            file,
            line,
            f"{field} names {value!r}, a remote resource kustomize would fetch; lint reaches no network "
            "unless --allow-remote is given",
        )
    reason = root.where(Path(os.path.realpath(here / value)))
    if reason is None:
        return None
    return Refusal(file, line, f"{field} names {value!r}, which leads {reason}: lint reads only the lint root")


def _remote(value: str, here: Path) -> bool:
    """A name kustomize would fetch: a URL, a git form, or a host path (`example.com/org/repo`) not found here."""
    if _SCHEME.match(value) or value.startswith(_GIT_FORMS):
        return True
    first, slash, _rest = value.partition("/")
    if not slash or first in (".", "..") or not ("." in first or ":" in first):
        return False
    return not os.path.lexists(here / value)


def _references(node: yaml.Node | None) -> Iterator[tuple[str, str, int]]:
    """(field, name, line) of every file, folder or URL a kustomization names; inline YAML is left out."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        field = key.value if isinstance(key, yaml.ScalarNode) else ""
        if field in _FOLDER_FIELDS or field in _FILE_LISTS:
            yield from _names(field, value)
        elif field in _PATH_ITEMS:
            for item in _items(value):
                yield from _names(field, _get(item, "path"))
        elif field == "openapi":
            yield from _names(field, _get(value, "path"))
        elif field in _GENERATORS:
            for item in _items(value):
                for part in ("files", "envs", "env", "valuesFile", "chartHome"):
                    for _field, name, name_line in _names(field, _get(item, part)):
                        # a `files` entry may be `key=path`
                        yield field, (name.partition("=")[2] or name) if part == "files" else name, name_line
        elif field in ("helmGlobals", "helmCharts"):
            for item in (value, *_items(value)):
                for part in ("chartHome", "valuesFile", "additionalValuesFiles", "repo"):
                    yield from _names(field, _get(item, part))


def _names(field: str, node: yaml.Node | None) -> Iterator[tuple[str, str, int]]:
    for item in (node, *_items(node)):
        if isinstance(item, yaml.ScalarNode) and item.value and "\n" not in item.value:
            yield field, item.value, item.start_mark.line + 1


def _items(node: yaml.Node | None) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _get(node: yaml.Node | None, name: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == name:
                found: yaml.Node = value
                return found
    return None
