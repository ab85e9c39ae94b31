"""Render a Helm chart (`helm template`) or a kustomization (`kustomize build` / `kubectl kustomize`).

The real programs do the rendering; kubegpu never reimplements Go templates or kustomize. A repository is
untrusted, so each program gets absolute paths after `--` and flags written `--flag=value`, runs in the minimal
environment of `sandbox.py` with a time limit and a cap on its output, and reads only the lint root: a chart is
rendered from a private copy of its regular files (`chart_copy.py`), and a kustomization is built only when every
file it names lies in the root and nothing is remote (`kustomize_refs.py`; `--allow-remote` lets remote ones be
fetched). Kustomize builds run from a temporary kustomization that adds `buildMetadata: [originAnnotations,
transformerAnnotations]` over the user's folder, so that every object says which file it came from and which
kustomization patched it; the user's files are never written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from kubegpu.deadline import Deadline
from kubegpu.manifests.roots import Root, display
from kubegpu.manifests.selection import work_tree

DEFAULT_RENDER_TIMEOUT_S = 60.0
DEFAULT_RENDER_DEADLINE_S = 300.0
DEFAULT_RELEASE = "release-name"
# helm's own checks (pkg/chartutil: a release name; a namespace is a DNS-1123 label), made before helm runs.
_RELEASE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_RELEASE_LENGTH = 53
MAX_NAMESPACE_LENGTH = 63


def release_problem(name: str) -> str | None:
    """Why `name` is not a release name helm accepts, or None."""
    return _name_problem(
        name, _RELEASE, MAX_RELEASE_LENGTH, "a release name", "lower-case letters, digits, '-' and '.'"
    )


def namespace_problem(name: str) -> str | None:
    """Why `name` is not a namespace (a DNS-1123 label), or None."""
    return _name_problem(name, _LABEL, MAX_NAMESPACE_LENGTH, "a namespace name", "lower-case letters, digits and '-'")


def _name_problem(name: str, pattern: re.Pattern[str], limit: int, what: str, letters: str) -> str | None:
    if len(name) <= limit and pattern.match(name):
        return None
    return f"{name!r} is not {what}: {letters}, starting and ending with a letter or digit, at most {limit} characters"


def set_problem(pair: str) -> str | None:
    """Why `pair` is not a `--set` value (`key=value`, on one line), or None."""
    key, equals, _value = pair.partition("=")
    if not equals or not key.strip() or any(c in pair for c in "\0\n\r"):
        return f"{pair!r} is not a key=value pair on one line"
    return None


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

    def arguments(self) -> list[str]:
        """helm template's flags for these settings, each `--flag=value` so that no value reads as a flag;
        a ValueError says which value helm would refuse."""
        problem = (
            release_problem(self.release or DEFAULT_RELEASE)
            or (namespace_problem(self.namespace) if self.namespace else None)
            or next((p for p in map(set_problem, self.set) if p), None)
        )
        if problem is not None:
            raise ValueError(problem)
        flags = [f"--values={os.path.abspath(values)}" for values in self.values]
        flags += [f"--set={pair}" for pair in self.set]
        if self.namespace:
            flags.append(f"--namespace={self.namespace}")
        return flags


@dataclass(frozen=True)
class RenderOptions:
    """How charts and kustomizations are rendered: helm settings for every chart (`--helm-values`, `--helm-set`)
    and per chart folder (the config), and, from the command line only, whether remote resources may be fetched,
    the limit of one render and of all of a run's renders. `roots` and `ends` are set for each run."""

    helm: HelmSettings = field(default_factory=HelmSettings)
    charts: Mapping[Path, HelmSettings] = field(default_factory=dict)  # resolved chart folder -> settings
    allow_remote: bool = False
    timeout_s: float = DEFAULT_RENDER_TIMEOUT_S
    deadline_s: float = DEFAULT_RENDER_DEADLINE_S
    roots: Mapping[Path, Root] = field(default_factory=dict)  # kustomization folder (resolved) -> its root
    ends: Deadline | None = None  # past it no render starts
    enabled: bool = True  # False: --no-render, only plain files are linted
    results: Mapping[Path, Rendered] = field(default_factory=dict)  # this run's renders, by resolved folder
    # (apiVersion, kind) -> no rule reads such objects: a reports-only run cuts them from plain files before they
    # are parsed (`unread.strip_unread`); None: files are read whole (fix edits them)
    unread: Callable[[str, str], bool] | None = None
    # digest of a document's text -> the YAML parser reads it cleanly (`unread.strip_unread`, checked): a run reads
    # plain files twice when a whole-input check needs them, and repositories keep copies of the same CRDs
    well_formed: dict[bytes, bool] = field(default_factory=dict)

    def for_chart(self, chart: Path) -> HelmSettings:
        own = self.charts.get(chart.resolve())
        return self.helm if own is None else own.merged(self.helm)

    def for_run(self, roots: Mapping[Path, Root]) -> RenderOptions:
        """These options for one run: the roots its walk found, and its deadline starting now."""
        return replace(self, roots=roots, ends=Deadline.after(self.deadline_s))

    def root_of(self, folder: Path) -> Root:
        """The root a kustomization may read in: the one its walk found, else its git work tree or itself."""
        real = Path(os.path.realpath(folder))
        found = self.roots.get(real)
        if found is not None:
            return found
        top = work_tree(real)
        return Root(top if top is not None else real)

    def limit(self, seconds: float) -> str:
        """The limit a render of `seconds` (from `time_left`) meets, in words."""
        if seconds < self.timeout_s:
            return f"the run's render deadline ({self.deadline_s:g} s, --render-deadline)"
        return f"{self.timeout_s:g} s (--render-timeout)"

    def time_left(self) -> float | None:
        """Seconds the next render may take (its limit, or less before the run's deadline); None past it."""
        if self.ends is None:
            return self.timeout_s
        left = self.ends.remaining()
        return None if left <= 0 else min(self.timeout_s, left)


@dataclass(frozen=True)
class Rendered:
    """What a renderer printed, or why there is nothing: `notice` (not rendered, not a failure) or `error`."""

    text: str | None
    notice: str | None = None
    error: str | None = None
    workdir: Path | None = None  # where relative origin paths in `text` start (kustomize)
    root: Root | None = None  # what the rendered objects' origins may point into


def helm_binary() -> str | None:
    found = shutil.which("helm")
    return os.path.abspath(found) if found else None


def kustomize_command() -> list[str] | None:
    """`kustomize build`, else `kubectl kustomize` (kubectl has kustomize built in)."""
    found = shutil.which("kustomize")
    if found:
        return [os.path.abspath(found), "build"]
    kubectl = shutil.which("kubectl")
    return [os.path.abspath(kubectl), "kustomize"] if kubectl else None


def _deadline_passed(options: RenderOptions) -> Rendered:
    return Rendered(
        None,
        error=f"not rendered: the run's renders took {options.deadline_s:g} s, the limit of --render-deadline",
    )


def render_chart(chart: Path, options: RenderOptions, max_bytes: int) -> Rendered:
    helm = helm_binary()
    if helm is None:
        return Rendered(
            None, notice="not rendered: helm not found; install helm or pipe `helm template` output to `kubegpu lint -`"
        )
    settings = options.for_chart(chart)
    try:
        flags = settings.arguments()
    except ValueError as err:
        return Rendered(None, error=f"not rendered: {err}")
    timeout = options.time_left()
    if timeout is None:
        return _deadline_passed(options)
    # Runs without a chart or kustomization never need these (tempfile alone was 1 % of a one-file lint's start).
    import tempfile

    from kubegpu.manifests import chart_copy, sandbox

    with tempfile.TemporaryDirectory(prefix="kubegpu-helm-") as private:
        home = Path(private) / "home"
        home.mkdir()
        copy = Path(private) / "chart" / (chart.name or "chart")
        refused = chart_copy.copy_chart(chart, copy, max_bytes)
        if refused is not None:
            return Rendered(None, notice=f"not rendered: {refused}")
        release = settings.release or DEFAULT_RELEASE
        command = [helm, "template", *flags, "--", release, str(copy)]
        ran = sandbox.run(
            command,
            cwd=home,
            env=sandbox.environment(home, options.allow_remote),
            timeout_s=timeout,
            max_bytes=max_bytes,
            limit=options.limit(timeout),
        )
        said = ran.err.replace(str(copy), display(chart))
    if ran.stopped is not None:
        return Rendered(None, error=ran.stopped)
    if ran.code != 0:
        message = _first_error_line(said)
        if "missing in charts/ directory" in said or ("dependencies" in message and "missing" in message):
            return Rendered(None, notice=f"not rendered: {message}; run `helm dependency build` first")
        return Rendered(None, error=f"helm template failed: {message}")
    return Rendered(ran.out, root=Root.of(chart))


def render_kustomization(folder: Path, options: RenderOptions, max_bytes: int) -> Rendered:
    command = kustomize_command()
    if command is None:
        return Rendered(
            None,
            notice="not rendered: neither kustomize nor kubectl found; install one or pipe "
            "`kustomize build` output to `kubegpu lint -`",
        )
    import tempfile  # as in render_chart: only runs with a kustomization need these

    from kubegpu.manifests import kustomize_refs, sandbox

    root = options.root_of(folder)
    refusal = kustomize_refs.check(folder, root, options.allow_remote, max_bytes)
    if refusal is not None:
        return Rendered(None, notice=refusal.notice())
    timeout = options.time_left()
    if timeout is None:
        return _deadline_passed(options)
    private = Path(tempfile.mkdtemp(prefix="kubegpu-kustomize-"))
    workdir = private / "build"
    try:
        home = private / "home"
        home.mkdir()
        workdir.mkdir()
        target = os.path.relpath(os.path.realpath(folder), workdir)
        read = kustomize_refs.read_kustomization(folder, max_bytes)
        # kustomize builds a Component only under `components:` of a Kustomization; it refuses it as a resource
        where = "components" if read is not None and kustomize_refs.is_component(read[1]) else "resources"
        (workdir / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"{where}:\n  - {json.dumps(target)}\nbuildMetadata: [originAnnotations, transformerAnnotations]\n"
        )
        ran = sandbox.run(
            [*command, "--", str(workdir)],
            cwd=home,
            env=sandbox.environment(home, options.allow_remote),
            timeout_s=timeout,
            max_bytes=max_bytes,
            limit=options.limit(timeout),
        )
    finally:
        shutil.rmtree(private, ignore_errors=True)
    if ran.stopped is not None:
        return Rendered(None, error=ran.stopped)
    if ran.code != 0:
        return Rendered(None, error=f"kustomize build failed: {kustomize_error(ran.err, folder, workdir, target)}")
    return Rendered(ran.out, workdir=workdir, root=root)


_KLOG = re.compile(r"^[EWIF]\d{4} [\d:.]+\s+\d+ [^\]]*\] ")  # kubectl's log prefix: E1206 12:00:00.0 123 run.go:72]
_QUOTED_ERR = re.compile(r'"command failed" err="((?:[^"\\]|\\.)*)"')


def kustomize_error(stderr: str, folder: Path, workdir: Path, target: str) -> str:
    """kustomize's (or kubectl's) whole error, on one line, naming the user's folder where it named kubegpu's
    temporary wrapper: kubectl prints it as a log entry (`E1206 ... "command failed" err=...`), quoted on one line or
    as an indented block, which is unwrapped here instead of cut to its first line."""
    text = stderr.strip()
    quoted = _QUOTED_ERR.search(text)
    if quoted is not None:
        try:
            message = json.loads(f'"{quoted.group(1)}"')
        except ValueError:
            message = quoted.group(1)
    elif "err=<" in text:
        body = text.split("err=<", 1)[1]
        message = " ".join(line.strip() for line in body.splitlines() if line.strip() and line.strip() != ">")
    else:
        lines = [_KLOG.sub("", line).strip() for line in text.splitlines() if line.strip()]
        message = " ".join(lines) or "no output"
        for prefix in ("Error: ", "error: "):
            message = message.removeprefix(prefix)
    # The wrapper's layer: kustomize read the user's folder as a file first ("must resolve to a file"), then as a
    # kustomization; only the second error says what is wrong.
    ours = re.match(
        r"accumulating resources: accumulation err='accumulating (?:resources|components) from "
        + re.escape(f"'{target}'")
        + r": .*? must resolve to a file': (.*)$",
        message,
        re.DOTALL,
    )
    if ours is not None:
        message = ours.group(1)
    shown = display(folder)
    real = os.path.realpath(folder)
    message = re.sub(re.escape(real) + r"(?=[/'\s]|$)", shown, message.replace(f"'{target}'", f"'{shown}'"))
    message = message.replace(str(workdir), "kubegpu's build folder").replace(str(workdir.parent), "a temporary folder")
    return " ".join(message.split())


def _first_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line.removeprefix("Error: ")
    return lines[0] if lines else "no output"
