"""Render a Helm chart (`helm template`) or a kustomization (`kustomize build` / `kubectl kustomize`).

The real programs do the rendering; kubegpu never reimplements Go templates or kustomize. Kustomize
builds run from a temporary kustomization that adds `buildMetadata: [originAnnotations,
transformerAnnotations]` over the user's folder, so that every object says which file it came from
and which kustomization patched it; the user's files are never written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

RENDER_TIMEOUT_S = 120


@dataclass(frozen=True)
class HelmSettings:
    """How one chart is rendered: values files, `--set` pairs, release name and namespace."""

    values: tuple[str, ...] = ()
    set: tuple[str, ...] = ()
    release: str | None = None
    namespace: str | None = None

    def merged(self, other: HelmSettings) -> HelmSettings:
        """These settings, then `other`'s (later values files and --set pairs win, as in helm)."""
        return HelmSettings(
            values=(*self.values, *other.values),
            set=(*self.set, *other.set),
            release=other.release or self.release,
            namespace=other.namespace or self.namespace,
        )


@dataclass(frozen=True)
class RenderOptions:
    """Helm settings for every chart (`--helm-values`, `--helm-set`) and per chart folder (the config)."""

    helm: HelmSettings = field(default_factory=HelmSettings)
    charts: Mapping[Path, HelmSettings] = field(default_factory=dict)  # resolved chart folder -> settings

    def for_chart(self, chart: Path) -> HelmSettings:
        own = self.charts.get(chart.resolve())
        return self.helm if own is None else own.merged(self.helm)


@dataclass(frozen=True)
class Rendered:
    """What a renderer printed, or why there is nothing: `notice` (not rendered, not a failure) or `error`."""

    text: str | None
    notice: str | None = None
    error: str | None = None
    workdir: Path | None = None  # where relative origin paths in `text` start (kustomize)


def helm_binary() -> str | None:
    return shutil.which("helm")


def kustomize_command() -> list[str] | None:
    """`kustomize build`, else `kubectl kustomize` (kubectl has kustomize built in)."""
    found = shutil.which("kustomize")
    if found:
        return [found, "build"]
    kubectl = shutil.which("kubectl")
    return [kubectl, "kustomize"] if kubectl else None


def render_chart(chart: Path, options: RenderOptions) -> Rendered:
    helm = helm_binary()
    if helm is None:
        return Rendered(
            None, notice="not rendered: helm not found; install helm or pipe `helm template` output to `kubegpu lint -`"
        )
    settings = options.for_chart(chart)
    command = [helm, "template", settings.release or "release-name", str(chart)]
    for values in settings.values:
        command += ["--values", values]
    for pair in settings.set:
        command += ["--set", pair]
    if settings.namespace:
        command += ["--namespace", settings.namespace]
    result = _run(command, None)
    if isinstance(result, str):
        return Rendered(None, error=result)
    code, out, err = result
    if code != 0:
        message = _first_error_line(err)
        if "missing in charts/ directory" in err or ("dependencies" in message and "missing" in message):
            return Rendered(None, notice=f"not rendered: {message}; run `helm dependency build` first")
        return Rendered(None, error=f"helm template failed: {message}")
    return Rendered(out)


def render_kustomization(folder: Path) -> Rendered:
    command = kustomize_command()
    if command is None:
        return Rendered(
            None,
            notice="not rendered: neither kustomize nor kubectl found; install one or pipe "
            "`kustomize build` output to `kubegpu lint -`",
        )
    import tempfile  # lint runs without a kustomization never need it (1 % of a one-file lint's instructions)

    workdir = Path(tempfile.mkdtemp(prefix="kubegpu-kustomize-"))
    try:
        target = os.path.relpath(folder.resolve(), workdir)
        (workdir / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources:\n  - {target}\nbuildMetadata: [originAnnotations, transformerAnnotations]\n"
        )
        result = _run([*command, str(workdir)], None)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if isinstance(result, str):
        return Rendered(None, error=result)
    code, out, err = result
    if code != 0:
        return Rendered(None, error=f"kustomize build failed: {_first_error_line(err).replace(str(workdir), '.')}")
    return Rendered(out, workdir=workdir)


def _run(command: list[str], cwd: Path | None) -> tuple[int, str, str] | str:
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=RENDER_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"{Path(command[0]).name} did not finish within {RENDER_TIMEOUT_S} s"
    except OSError as err:
        return f"cannot run {command[0]}: {err.strerror or err}"
    return done.returncode, done.stdout, done.stderr


def _first_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line.removeprefix("Error: ")
    return lines[0] if lines else "no output"
