"""The manifests a command is given (files, folders and `-` alike), read as `lint` reads them.

Folders are walked by `sources.discover` (ignore files, tool folders, links out of the root skipped) and charts
and kustomizations rendered by lint's `render_run.render_all` (each once, in the sandbox), so `admit`,
`coldstart`, `gen` and `simulate` take what `lint` takes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.manifests.document import Document
from kubegpu.manifests.objects import objects_of_text
from kubegpu.manifests.render import RenderOptions
from kubegpu.manifests.render_run import render_all
from kubegpu.manifests.sources import DEFAULT_MAX_BYTES, HELM, KUSTOMIZE, MANIFEST, WalkReport, discover, read_text


@dataclass(frozen=True)
class ManifestFile:
    """One input's objects: a file, standard input, or a chart or kustomization rendered (`text` is what was read)."""

    name: str
    text: str
    documents: tuple[Document, ...]
    walked: bool = False  # found in a folder given (or rendered), not named on the command line


@dataclass(frozen=True)
class ManifestInputs:
    """Every input's objects in order, and the notices of the walk and the renders (links skipped, not rendered)."""

    files: tuple[ManifestFile, ...]
    notices: tuple[str, ...]

    @property
    def documents(self) -> list[Document]:
        return [doc for file in self.files for doc in file.documents]


def read_inputs(names: Sequence[str], render: RenderOptions | None = None) -> ManifestInputs:
    """The objects of every file, folder and `-` in `names`.

    A file named on the command line must hold Kubernetes objects only; in a folder, documents that are not objects
    (values files, other YAML) are passed over as lint passes them. A parse error, an unreadable file, a render that
    fails or names (some given) that hold no manifest at all are an InputError naming the file and line.
    """
    if not names:
        return ManifestInputs((), ())
    walk = WalkReport()
    found = list(discover(names, report=walk))
    for name, reason, _what in walk.skipped:
        if name in names:  # named on the command line, and not read: say why rather than that nothing was found
            raise InputError(f"not read: {reason}", file=name)
    options = (render or RenderOptions()).for_run(walk.roots)
    # lint's renders: each chart and kustomization once, a base through the overlays that include it
    run = render_all(found, options, DEFAULT_MAX_BYTES, jobs=0, unread=None)
    notices = list(walk.notices)
    files: list[ManifestFile] = []
    for name, path, kind in run.inputs:
        if kind == MANIFEST:
            text = read_text(name, path, kind, "")
            given = name in names or path is None
            files.append(ManifestFile(name, text, tuple(objects_of_text(name, text, given)), walked=not given))
        elif kind in (HELM, KUSTOMIZE) and path is not None:
            rendered = run.results[Path(os.path.realpath(path))]
            if rendered.error is not None:
                raise InputError(rendered.error, file=name)
            if rendered.text is None:
                notices.append(f"{name}: {rendered.notice or 'not rendered'}")
            else:
                documents = tuple(objects_of_text(name, rendered.text, strict=False))
                files.append(ManifestFile(name, rendered.text, documents, walked=True))
    if not files:
        raise InputError(f"no manifest found in {', '.join(names)}")
    return ManifestInputs(tuple(files), tuple(notices))
