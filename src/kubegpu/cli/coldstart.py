"""`kubegpu coldstart POD.yaml`: predict a GPU inference pod's seconds to ready, term by term, and judge its probes."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubegpu.cli.common import EXIT_FINDINGS, fail
from kubegpu.errors import InputError, KubegpuError
from kubegpu.units.size import size_bytes

if TYPE_CHECKING:
    from kubegpu.serving.coldstart import ImageFacts, ModelSize, Prediction, Rates
    from kubegpu.workloads.partial import PartialObject


class Format(StrEnum):
    text = "text"
    json = "json"


def _positive(value: float | None, option: str) -> float | None:
    if value is not None and value <= 0:
        raise InputError(f"{option} must be more than 0, not {value}")
    return value


def load_rate(path: Path) -> tuple[float, str]:
    """The best cold-cache rate of a `kubegpu loadbench -o json` result, and a description of it."""
    try:
        data = json.loads(path.read_text())
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=str(path)) from err
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"not a loadbench JSON result: {err}", file=str(path)) from err
    best = data.get("best") if isinstance(data, dict) else None
    if not isinstance(best, dict) or not isinstance(best.get("gbps"), (int, float)) or best["gbps"] <= 0:
        raise InputError("not a loadbench JSON result with a best cold rate ('best.gbps')", file=str(path))
    return float(best["gbps"]), f"measured by loadbench ({path.name}: {best.get('method')} ×{best.get('threads')})"


def coldstart(
    manifest: Annotated[
        Path, typer.Argument(help="A manifest with GPU inference pods (Pod, Deployment, InferenceService, …).")
    ],
    image_size: Annotated[
        list[str] | None,
        typer.Option(
            help="IMAGE=SIZE for one image, or SIZE for every image not otherwise known, e.g. 9G or 9GiB (repeatable)."
        ),
    ] = None,
    oci_layout: Annotated[
        list[Path] | None,
        typer.Option(
            help="An OCI image layout folder (index.json) to take image sizes and lazy-pull annotations from."
        ),
    ] = None,
    registry: Annotated[
        bool,
        typer.Option("--registry/--no-registry", help="Ask the images' registries for their manifests (sizes only)."),
    ] = False,
    insecure_registry: Annotated[bool, typer.Option(help="Use plain HTTP for registries.")] = False,
    pull_gbps: Annotated[float | None, typer.Option(help="Node image pull rate, GB/s (default 0.05).")] = None,
    download_gbps: Annotated[float | None, typer.Option(help="Weights download rate, GB/s (default 0.05).")] = None,
    model_size: Annotated[
        str | None, typer.Option(help="Weights size: 140G, 140GB, 140Gi or 140GiB (default: the known-models table).")
    ] = None,
    model_dir: Annotated[
        Path | None, typer.Option(help="A model folder whose safetensors files give the size.")
    ] = None,
    loadbench: Annotated[
        Path | None, typer.Option(help="A `kubegpu loadbench -o json` result: its best cold rate is the load rate.")
    ] = None,
    load_gbps: Annotated[float | None, typer.Option(help="Weights load rate, GB/s (default 0.31).")] = None,
    init_seconds: Annotated[float | None, typer.Option(help="Server start besides the load (default 20).")] = None,
    output: Annotated[Format, typer.Option("--output", "-o", help="text or json.")] = Format.text,
) -> None:
    """Predict how long each GPU inference container of the manifest takes to become ready (image pull, weights
    download and load, server start) and whether its startup or liveness probe gives it that long (exit 1 if not)."""
    try:
        rates = _rates(pull_gbps, download_gbps, loadbench, load_gbps, init_seconds)
        given_model = _given_model(model_size, model_dir)
        sizes = _image_sizes(image_size or [])
        results = _predictions(manifest, rates, given_model, sizes, oci_layout or [], registry, insecure_registry)
    except KubegpuError as err:
        raise fail(err) from err
    if output is Format.json:
        report: list[dict[str, Any]] = [{"object": obj, **p.as_dict()} for obj, p in results]
        typer.echo(json.dumps(report, indent=2))
    else:
        from kubegpu.serving.coldstart import describe

        blocks = [f"{obj}\n{describe([p])}" for obj, p in results]
        typer.echo("\n\n".join(blocks))
    raise typer.Exit(EXIT_FINDINGS if any(p.killed for _, p in results) else 0)


def _rates(
    pull_gbps: float | None,
    download_gbps: float | None,
    loadbench: Path | None,
    load_gbps: float | None,
    init_seconds: float | None,
) -> Rates:
    """The rates the prediction uses: the options given, a loadbench result's best cold rate, else the defaults."""
    from kubegpu.serving.coldstart import Rates

    defaults = Rates()
    rate_source = defaults.load_source
    rate = _positive(load_gbps, "--load-gbps")
    if loadbench is not None:
        if rate is not None:
            raise InputError("give --loadbench or --load-gbps, not both")
        rate, rate_source = load_rate(loadbench)
    elif rate is not None:
        rate_source = "--load-gbps"
    return Rates(
        pull_gbps=_positive(pull_gbps, "--pull-gbps") or defaults.pull_gbps,
        pull_source="--pull-gbps" if pull_gbps else defaults.pull_source,
        download_gbps=_positive(download_gbps, "--download-gbps") or defaults.download_gbps,
        download_source="--download-gbps" if download_gbps else defaults.download_source,
        load_gbps=rate or defaults.load_gbps,
        load_source=rate_source,
        init_seconds=defaults.init_seconds if init_seconds is None else max(0.0, init_seconds),
    )


def _given_model(model_size: str | None, model_dir: Path | None) -> ModelSize | None:
    """The weights' size from --model-size or a --model-dir of safetensors files (None: the known-models table)."""
    from kubegpu.serving.coldstart import ModelSize

    if model_size is not None and model_dir is not None:
        raise InputError("give --model-size or --model-dir, not both")
    if model_size is not None:
        return ModelSize(size_bytes(model_size, "--model-size"), "--model-size")
    if model_dir is not None:
        from kubegpu.loadbench.shards import find_shards

        shards = find_shards([model_dir])
        return ModelSize(sum(s.size for s in shards), f"{len(shards)} safetensors file(s) in {model_dir}")
    return None


def _image_sizes(items: list[str]) -> tuple[dict[str, ImageFacts], ImageFacts | None]:
    """--image-size: IMAGE=SIZE per image, and SIZE for every image not otherwise known."""
    from kubegpu.serving.coldstart import ImageFacts

    sized: dict[str, ImageFacts] = {}
    every: ImageFacts | None = None
    for item in items:
        name, eq, value = item.rpartition("=")
        if eq:
            sized[name] = ImageFacts(size_bytes(value, "--image-size"), None, "--image-size")
        else:
            every = ImageFacts(size_bytes(value, "--image-size"), None, "--image-size")
    return sized, every


def _image_facts(
    images: list[str],
    layouts: list[dict[str, ImageFacts]],
    sizes: tuple[dict[str, ImageFacts], ImageFacts | None],
    registry: bool,
    insecure_registry: bool,
    notes: list[str],
) -> dict[str, ImageFacts]:
    """What is known of a pod's images: the OCI layouts', --image-size, the registries' (problems go to `notes`)."""
    from kubegpu.live.registry import match_layout, registry_image

    sized, every = sizes
    facts: dict[str, ImageFacts] = {}
    for layout in layouts:
        facts.update(match_layout(images, layout))
    for image in images:
        if image in sized:
            facts[image] = sized[image]
        elif image not in facts and registry:
            try:
                facts[image] = registry_image(image, insecure_registry)
            except InputError as err:
                notes.append(f"registry: {err}")
        if image not in facts and every is not None:
            facts[image] = every
    return facts


def _predictions(
    manifest: Path,
    rates: Rates,
    given_model: ModelSize | None,
    sizes: tuple[dict[str, ImageFacts], ImageFacts | None],
    oci_layout: list[Path],
    registry: bool,
    insecure_registry: bool,
) -> list[tuple[str, Prediction]]:
    """One prediction per GPU container of the manifest's pods (those lint and admit see), with its object."""
    from kubegpu.live.registry import layout_images
    from kubegpu.manifests.reader import read_inputs
    from kubegpu.serving.manifest import manifest_predictions

    layouts = [layout_images(path) for path in oci_layout]
    inputs = read_inputs([str(manifest)])  # a file, a folder or `-`, as lint reads them
    for notice in inputs.notices:
        typer.echo(f"kubegpu: notice: {notice}", err=True)
    documents = inputs.documents

    def facts_of(images: list[str], notes: list[str]) -> dict[str, ImageFacts]:
        return _image_facts(images, layouts, sizes, registry, insecure_registry, notes)

    def on_fragment(fragment: PartialObject) -> None:
        typer.echo(
            f"kubegpu: notice: {fragment.file}:{fragment.line}: {fragment.what}: a patch fragment, not checked",
            err=True,
        )

    return manifest_predictions(documents, str(manifest), facts_of, given_model, rates, on_fragment)


def register(app: typer.Typer, gen_app: typer.Typer) -> None:
    """Add `kubegpu coldstart`."""
    app.command("coldstart")(coldstart)
