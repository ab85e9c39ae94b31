"""Which kustomizations of a run are built: each once. One that another kustomization of the run builds on (a base
an overlay includes, a component) is reported through the ones that include it; one that nothing includes is built
itself. When every build that includes a base fails or is refused, the base is built itself after all.

Only the kustomization files inside each one's lint root are read; what they name outside it is left to the
build, which refuses it (`kustomize_refs.check`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegpu.manifests.kustomize_refs import (
    MAX_KUSTOMIZATIONS,
    included_folders,
    kustomization_file,
    read_kustomization,
)
from kubegpu.manifests.roots import Root

MAX_GRAPH = 10 * MAX_KUSTOMIZATIONS
"""Kustomization files one run's plan may read: past it every kustomization found is built itself."""


@dataclass(frozen=True)
class RenderPlan:
    """The kustomizations of a run (resolved folders) and what each builds on, among them or below them."""

    found: tuple[Path, ...]  # the kustomizations the walk found, in its order
    includes: Mapping[Path, tuple[Path, ...]]  # folder -> the kustomization folders it builds on directly

    def reach(self, start: Path) -> set[Path]:
        """Every kustomization `start` builds on, directly or through others (itself left out unless a cycle)."""
        seen: set[Path] = set()
        stack = list(self.includes.get(start, ()))
        while stack:
            here = stack.pop()
            if here in seen:
                continue
            seen.add(here)
            stack.extend(self.includes.get(here, ()))
        return seen

    def builds(self, among: Iterable[Path] | None = None) -> list[Path]:
        """Of `among` (default: every kustomization found), the ones no other of them builds on, in the walk's
        order; members of a cycle that none of those reaches are built too."""
        wanted = list(self.found if among is None else among)
        reaches = {folder: self.reach(folder) for folder in wanted}
        included = {other for folder in wanted for other in reaches[folder] if other != folder}
        chosen = [folder for folder in wanted if folder not in included]
        covered = set(chosen).union(*(reaches[f] for f in chosen)) if chosen else set()
        for folder in wanted:  # a cycle that no chosen build reaches: built itself
            if folder not in covered:
                chosen.append(folder)
                covered |= {folder, *reaches[folder]}
        order = {folder: i for i, folder in enumerate(wanted)}
        return sorted(chosen, key=order.__getitem__)

    def through(self, built: Sequence[Path]) -> dict[Path, list[Path]]:
        """Each kustomization found and not in `built`, with the builds of `built` that include it."""
        out: dict[Path, list[Path]] = {}
        wanted = set(self.found) - set(built)
        for folder in built:
            for other in self.reach(folder):
                if other in wanted:
                    out.setdefault(other, []).append(folder)
        return out

    def orphaned(self, succeeded: set[Path], failed: set[Path]) -> list[Path]:
        """The kustomizations found that no build in `succeeded` includes, nor built themselves: those whose only
        including builds failed; the next builds are the outermost of them."""
        done = succeeded | failed
        reached = set().union(*(self.reach(f) for f in succeeded)) if succeeded else set()
        lost = [f for f in self.found if f not in done and f not in reached]
        return self.builds(lost) if lost else []


def plan_renders(folders: Sequence[Path], root_of: Callable[[Path], Root], max_bytes: int) -> RenderPlan:
    """The plan of a run whose walk found the kustomizations `folders`: each one's kustomization file is read, and
    those of the folders they build on while these lie in the including one's root."""
    found = tuple(dict.fromkeys(Path(os.path.realpath(f)) for f in folders))
    includes: dict[Path, tuple[Path, ...]] = {}
    queue = [(folder, root_of(folder)) for folder in reversed(found)]
    while queue:
        folder, root = queue.pop()
        if folder in includes:
            continue
        if len(includes) >= MAX_GRAPH:
            return RenderPlan(found, {})  # too many to plan: each built itself
        read = read_kustomization(folder, max_bytes)
        named = included_folders(folder, read[1]) if read is not None and read[1] is not None else []
        inside = tuple(f for f in named if root.where(f) is None and kustomization_file(f) is not None)
        includes[folder] = inside
        queue.extend((f, root) for f in inside if f not in includes)
    return RenderPlan(found, includes)
