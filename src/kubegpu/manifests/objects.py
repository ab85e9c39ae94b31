"""The objects of a manifest file a command was given (admit, simulate, gen, coldstart, the Python API), read
as lint reads files.

One reader, so that every command refuses the same inputs: a file that cannot be read (missing, a FIFO, binary,
too big), YAML that does not parse, an alias bomb, runaway nesting or an object without its apiVersion or kind
are an InputError naming the file and line.
"""

from __future__ import annotations

from pathlib import Path

from kubegpu.errors import InputError
from kubegpu.manifests.document import Document
from kubegpu.manifests.loader import load_text
from kubegpu.manifests.sources import read_text


def read_objects(name: str) -> list[Document]:
    """The Kubernetes objects of the file `name` (`-`: standard input), in order, `kind: List` items included."""
    return objects_of_text(name, read_manifest(name))


def read_manifest(name: str) -> str:
    """The text of the manifest file `name` (`-`: standard input), or an InputError naming it and why."""
    return read_text(name, None if name == "-" else Path(name), "manifest")


def objects_of_text(name: str, text: str, strict: bool = True) -> list[Document]:
    """The Kubernetes objects of YAML or JSON text already read, refused as `read_objects` refuses a file's;
    with `strict` False (a file found in a folder) documents that are not objects are passed over, as lint does."""
    loaded = load_text(name, text)
    for problem in loaded.problems:
        if problem.fatal:
            raise InputError(problem.message, file=problem.file, line=problem.line)
        if strict and problem.code == "not-kubernetes-object":  # lint skips it; a command given it cannot use it
            raise InputError(f"{problem.reason}, which the API server requires", file=problem.file, line=problem.line)
    return loaded.documents
