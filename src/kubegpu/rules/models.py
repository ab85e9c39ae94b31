"""Model loading rules: inference cold starts (weights downloaded per pod, shared caches writable, no warm pool).

Defaults follow huggingface_hub (HF_HUB_CACHE > HUGGINGFACE_HUB_CACHE > HF_HOME/hub), vLLM/SGLang/TGI CLI flags,
KServe v0.15 (storage initializer, minReplicas default 1), KEDA v2.15 (minReplicaCount default 0), Knative Serving
v1.x (min-scale 0 under the KPA class with scale-to-zero on), Ray Serve 2.x (autoscaling_config.min_replicas default 1)
and kubernetes v1.35 HPA (minReplicas default 1).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from kubegpu.manifests import (
    ContainerRef,
    Document,
    FieldPath,
    PodTemplate,
    as_mapping,
    get_path,
    is_mapping,
    memoised,
    uses_accelerators,
)
from kubegpu.manifests.gpu_containers import gpu_containers
from kubegpu.ruleapi import Edit, Fix, RawFinding, Rule, RuleContext, Safety, Severity, Target
from kubegpu.workloads import kind_of, pod_templates

_PRACTICE = "model loading"

# Volume sources that outlive the pod (a cache); emptyDir, generic ephemeral volumes and projected data do not.
PERSISTENT_SOURCES = frozenset(
    {
        "persistentVolumeClaim",
        "hostPath",
        "nfs",
        "csi",
        "image",
        "iscsi",
        "cephfs",
        "rbd",
        "glusterfs",
        "azureFile",
        "azureDisk",
        "awsElasticBlockStore",
        "gcePersistentDisk",
        "cinder",
        "fc",
        "flexVolume",
        "portworxVolume",
        "quobyte",
        "storageos",
        "vsphereVolume",
        "photonPersistentDisk",
        "scaleIO",
    }
)
PER_POD_SOURCES = frozenset({"emptyDir", "ephemeral"})
_SHARED_FILESYSTEMS = frozenset({"nfs", "cephfs", "glusterfs", "azureFile", "quobyte"})
_HF_TOKENS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_TOKEN")
_REMOTE = re.compile(r"^(?:s3|gs|gcs|az|abfss?|wasbs?|https?|hf|oss|r2)://", re.IGNORECASE)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_STREAMING_FORMATS = frozenset({"runai_streamer", "runai_streamer_sharded", "tensorizer"})
_RAY_HF_HINT = re.compile(
    r"transformers|diffusers|vllm|huggingface|sentence[-_]transformers|from_pretrained|"
    r"model_id|llm_configs|ray\[llm\]"
)
_TRUE = frozenset({"1", "true", "yes", "on"})
_LOCAL_CACHE_KINDS = frozenset({"LocalModelCache", "ClusterLocalModel"})
# Words that make a container worth recognising; plain substring tests (no regex alternation scan) because
# every GPU container is tested and most match none.
_SERVER_HINTS = ("vllm", "text-generation", "sglang", "triton", "nvcr.io/nim/", "llm-d")
_LOADER_HINTS = ("from_pretrained", "snapshot_download", "hf_hub_download", "pipeline(")
_LLM_CALL = re.compile(r"\bllm\(")
# Server command lines; searched only when a plain substring test finds the server's name first.
_VLLM_COMMAND = re.compile(r"\bvllm\s+serve\b|vllm\.entrypoints")
_SGLANG_COMMAND = re.compile(r"\bsglang\s+serve\b")
_TRITON_COMMAND = re.compile(r"\btritonserver\b|triton_model_repo|--model-repository")
_OBJECT_URI = re.compile(r"(?:s3|gs|az)://[^\s\"',}]+")
# Python model loaders in a command, args or block scalar: the call and its first literal argument, if any.
_LOADER = re.compile(
    r"\b(?P<call>from_pretrained|snapshot_download|hf_hub_download|LLM|pipeline)\(\s*"
    r"(?:(?:repo_id|pretrained_model_name_or_path|model|task)\s*=\s*)?(?:[\"'](?P<model>[^\"'\s]+)[\"'])?"
)
_PIPELINE_MODEL = re.compile(r"\bpipeline\([^)]*?\bmodel\s*=\s*[\"'](?P<model>[^\"'\s]+)[\"']")


@dataclass(frozen=True)
class Token:
    """One word of a container's command line and the field it came from (`command` or `args`)."""

    text: str
    field: str


@dataclass(frozen=True)
class Server:
    """An inference server recognised in a container: what it is, where it gets weights and where it caches them."""

    name: str
    container: ContainerRef
    model: str | None  # the model reference as written (hub id, URI or path)
    model_path: FieldPath  # the field that holds it (for positions)
    downloads: bool  # it fetches weights at start (hub id, remote URI, NGC, a Hub token with no model named)
    streaming: bool  # it streams weights from object storage with a streaming loader (no cache by design)
    write_paths: tuple[str, ...]  # directories it downloads into
    read_paths: tuple[str, ...]  # local directories it reads weights from
    evidence: str = ""  # why we believe it downloads when no model is named

    @property
    def source(self) -> str:
        """What it downloads, for messages."""
        if self.model and _model_kind(self.model) in ("hub", "remote"):
            return f"'{self.model}'"
        return f"its model ({self.evidence})" if self.evidence else "its model"


_SHELL_SPECIAL = ("'", '"', "\\", "#")  # shlex.split treats nothing else specially (whitespace aside)
_SHLEX_SPACE = re.compile(r"[ \t\r\n]+")  # shlex's whitespace


def _tokens(container: ContainerRef) -> list[Token]:
    """Words of command then args; shell scripts (`sh -c "..."`) are split as a shell would."""
    out: list[Token] = []
    for field in ("command", "args"):
        items = container.data.get(field)
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, (str, int, float)):
                continue
            text = str(item)
            if len(text.split(None, 1)) > 1:  # whitespace between words (a script); cheaper than a regex
                script = text.replace("\\\n", " ")
                if not any(c in script for c in _SHELL_SPECIAL):
                    words = [w for w in _SHLEX_SPACE.split(script) if w]  # what shlex would give, faster
                else:
                    try:
                        import shlex  # rare (quotes, escapes, comments): lint start-up need not import it

                        words = shlex.split(script, comments=True)
                    except ValueError:
                        words = script.split()
                out.extend(Token(w, field) for w in words)
            else:
                out.append(Token(text, field))
    return out


def _raw_text(container: ContainerRef) -> str:
    parts = [str(container.data.get("image") or "")]
    for field in ("command", "args"):
        items = container.data.get(field)
        if isinstance(items, list):
            parts.extend(map(str, items))
    return " ".join(parts).lower()


def _flags(tokens: Sequence[Token]) -> dict[str, tuple[int, Token]]:
    """Each flag's first value, by name (underscores as dashes), with its position: `--name value` (the next word,
    unless it is a flag) or `--name=value`. Read once per container; `_flag` looks names up in it."""
    found: dict[str, tuple[int, Token]] = {}
    last = len(tokens) - 1
    for i, token in enumerate(tokens):
        word = token.text
        if not word.startswith("--"):
            continue
        key, eq, value = word.partition("=")
        key = key.replace("_", "-")
        if key in found:
            continue
        if eq:
            found[key] = (i, Token(value, token.field))
        elif i < last and not tokens[i + 1].text.startswith("--"):
            found[key] = (i, tokens[i + 1])
    return found


def _flag(flags: Mapping[str, tuple[int, Token]], *names: str) -> Token | None:
    """The value of `--name value` or `--name=value` (underscores and dashes are the same), first occurrence."""
    first: tuple[int, Token] | None = None
    for name in names:
        entry = flags.get(name.replace("_", "-"))
        if entry is not None and (first is None or entry[0] < first[0]):
            first = entry
    return None if first is None else first[1]


def _env(container: ContainerRef) -> tuple[dict[str, str], dict[str, int]]:
    """Literal env values by name, and the list index of every env entry by name (valueFrom included)."""
    values: dict[str, str] = {}
    index: dict[str, int] = {}
    env = container.data.get("env")
    if not isinstance(env, list):
        return values, index
    for i, item in enumerate(env):
        if not is_mapping(item) or "name" not in item:
            continue
        name = str(item["name"])
        index[name] = i
        if "value" in item and item["value"] is not None:
            values[name] = str(item["value"])
    return values, index


def _known(path: str | None) -> bool:
    """A path or reference we can reason about (no unexpanded `$(VAR)`, `${VAR}` or template braces)."""
    if not path:
        return False
    text = str(path)
    return "$" not in text and "{{" not in text and "<" not in text


def hf_cache_dir(env: Mapping[str, str], home: str) -> str | None:
    """Where huggingface_hub downloads to, from the environment (None when a variable is not a literal)."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE"):
        if name in env:
            return env[name] if _known(env[name]) else None
    if "HF_HOME" in env:
        return env["HF_HOME"].rstrip("/") + "/hub" if _known(env["HF_HOME"]) else None
    if "XDG_CACHE_HOME" in env:
        return env["XDG_CACHE_HOME"].rstrip("/") + "/huggingface/hub" if _known(env["XDG_CACHE_HOME"]) else None
    return f"{home}/.cache/huggingface/hub"


def _model_kind(model: str | None) -> str | None:
    if model is None or not _known(model):
        return None
    if "://" in model and _REMOTE.match(model):  # (most models are hub ids: no regex for them)
        return "remote"
    if model.startswith(("/", "./", "~")):
        return "local"
    if _HUB_ID.match(model):
        return "hub"
    return None


def _server_name(container: ContainerRef, tokens: Sequence[Token]) -> str | None:
    image = str(container.data.get("image") or "").lower()
    if "llm-d" in image:
        return "llm-d (vLLM)"
    if "vllm" in image:  # decided by the image alone: the command line is not joined
        return "vLLM"
    text = " ".join([t.text for t in tokens]).lower()
    if "vllm" in text and _VLLM_COMMAND.search(text):
        return "vLLM"
    if "text-generation-inference" in image or "text-generation-launcher" in text:
        return "TGI"
    if "sglang" in image or "sglang.launch_server" in text or ("sglang" in text and _SGLANG_COMMAND.search(text)):
        return "SGLang"
    if "tritonserver" in image or (("triton" in text or "--model-repository" in text) and _TRITON_COMMAND.search(text)):
        return "Triton"
    if image.startswith("nvcr.io/nim/"):
        return "NIM"
    return None


def _home(container: ContainerRef, template: PodTemplate) -> str:
    """The container's home directory: its kind's (KubeRay runs as user ray), else its image's, else root's."""
    adapter = kind_of(template.document)
    if adapter is not None and adapter.home:
        return adapter.home
    return "/home/ray" if "rayproject/" in str(container.data.get("image") or "").lower() else "/root"


def _mentions(text: str, words: Sequence[str]) -> bool:
    for word in words:  # noqa: SIM110  # a plain loop: any() over a generator costs twice as much per container
        if word in text:
            return True
    return False


def _mentions_loader(text: str) -> bool:
    """A Python model loader's name in lower-cased text (`llm(` only as a whole word)."""
    return _mentions(text, _LOADER_HINTS) or ("llm(" in text and _LLM_CALL.search(text) is not None)


def recognise(template: PodTemplate, container: ContainerRef) -> Server | None:
    """The inference server in a container, with its weight source and cache directories, or None.

    Recognised once per container (a container belongs to one template).
    """
    return memoised(container, "models.recognise", _recognise, template, container)


# Kinds whose object itself names the model its pods serve (so every container of theirs is looked at).
_MODEL_NAMING_KINDS = frozenset({"InferenceService", "LLMInferenceService", "RayService"})


def _recognise(template: PodTemplate, container: ContainerRef) -> Server | None:
    kind = template.kind
    raw = _raw_text(container)
    if (
        kind not in _MODEL_NAMING_KINDS
        and not _mentions(raw, _SERVER_HINTS)
        and not _mentions_loader(raw)
        and not (_entrypoint_field(template) is not None and _mentions_loader(_entrypoint(template)))
    ):
        return None  # cheap exit before shell-splitting: most GPU containers are not inference servers
    tokens = _tokens(container)
    env, env_index = _env(container)
    name = _server_name(container, tokens)
    hf_token = not env_index.keys().isdisjoint(_HF_TOKENS)
    if kind == "InferenceService":
        kserve = _kserve_storage(container, env, env_index)
        if kserve is not None:
            return kserve
        if name is None and (_is_hf_runtime(container) or hf_token):
            name = "KServe Hugging Face runtime"
    elif kind == "LLMInferenceService":
        return _llm_inference_service(template, container)
    elif kind == "RayService" and name is None:
        return _ray_serve(template, container, env, hf_token)
    if name is None:
        return _python_loader(template, container, env, env_index)
    if name == "NIM":
        return _nim(container, env)
    flags = _flags(tokens)
    if name == "Triton":
        return _triton(template, container, tokens, flags, env, hf_token)
    return _model_server(name, template, container, tokens, flags, env, env_index, hf_token)


def _llm_inference_service(template: PodTemplate, container: ContainerRef) -> Server | None:
    """A KServe LLMInferenceService names its model in spec.model.uri (pvc:// and oci:// are on the node already)."""
    spec = template.document.data.get("spec")
    model_spec = spec.get("model") if isinstance(spec, Mapping) else None
    uri = model_spec.get("uri") if isinstance(model_spec, Mapping) else None
    if not isinstance(uri, str) or not _known(uri):
        return None
    cached = uri.startswith(("pvc://", "oci://"))
    return Server("KServe LLMInferenceService", container, uri, container.path, not cached, False, (), ())


def _ray_serve(template: PodTemplate, container: ContainerRef, env: Mapping[str, str], hf_token: bool) -> Server | None:
    """A RayService whose serve config uses Hugging Face libraries (or whose container has a token) downloads."""
    config = (template.document.data.get("spec") or {}).get("serveConfigV2")
    if not (isinstance(config, str) and _RAY_HF_HINT.search(config)) and not hf_token:
        return None
    cache = hf_cache_dir(env, _home(container, template))
    evidence = "a Hugging Face token is set" if hf_token else "the serve config uses Hugging Face libraries"
    return Server("Ray Serve", container, None, container.path, True, False, (cache,) if cache else (), (), evidence)


def _nim(container: ContainerRef, env: Mapping[str, str]) -> Server:
    """NVIDIA NIM pulls its model profile from NGC into NIM_CACHE_PATH."""
    cache = env.get("NIM_CACHE_PATH", "/opt/nim/.cache")
    return Server(
        "NIM",
        container,
        str(container.data.get("image")),
        (*container.path, "image"),
        True,
        False,
        (cache,) if _known(cache) else (),
        (),
        "NIM pulls its model profile from NGC",
    )


def _triton(
    template: PodTemplate,
    container: ContainerRef,
    tokens: Sequence[Token],
    flags: Mapping[str, tuple[int, Token]],
    env: Mapping[str, str],
    hf_token: bool,
) -> Server:
    """Triton serves a model repository: a remote one is downloaded at start, a local one is read."""
    repos = [t for t in tokens if t.text.startswith(("--model-repository", "--model-store", "--triton_model_repo"))]
    values: list[Token] = []
    for flag in ("--model-repository", "--model-store", "--triton-model-repo-dir"):
        found = _flag(flags, flag)
        if found is not None:
            values.append(found)
    remote = next((v for v in values if _REMOTE.match(v.text)), None)
    local = tuple(v.text for v in values if _model_kind(v.text) == "local")
    where: FieldPath = (*container.path, (values[0].field if values else repos[0].field if repos else "command"))
    cache = hf_cache_dir(env, _home(container, template)) if hf_token else None
    return Server(
        "Triton",
        container,
        remote.text if remote else (values[0].text if values else None),
        where,
        remote is not None or hf_token,
        False,
        (cache,) if cache else (),
        local,
        "a Hugging Face token is set" if hf_token else "",
    )


def _model_argument(tokens: Sequence[Token], flags: Mapping[str, tuple[int, Token]]) -> Token | None:
    """The model a server's command line names: --model (and its aliases), or `vllm serve MODEL`."""
    model_token = _flag(flags, "--model", "--model-path", "--model-id")
    if model_token is not None:
        return model_token
    for i, token in enumerate(tokens[:-1]):
        if (
            token.text == "serve"
            and i > 0
            and tokens[i - 1].text.endswith("vllm")
            and not tokens[i + 1].text.startswith("-")
        ):
            return tokens[i + 1]
    return None


def _server_cache(
    name: str, container: ContainerRef, flags: Mapping[str, tuple[int, Token]], env: Mapping[str, str], home: str
) -> str | None:
    """Where a server keeps downloaded weights: --download-dir, TGI's image default, else the Hugging Face cache."""
    download_dir = _flag(flags, "--download-dir", "--huggingface-hub-cache")
    if download_dir is not None:
        return download_dir.text if _known(download_dir.text) else None
    if name == "TGI" and env.keys().isdisjoint(("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME")):
        # The TGI image sets HF_HOME=/data; Google's Hugging Face DLC builds of it set the hub cache to /tmp.
        return "/tmp" if "deeplearning-platform-release" in str(container.data.get("image")) else "/data"
    return hf_cache_dir(env, home)


def _model_server(
    name: str,
    template: PodTemplate,
    container: ContainerRef,
    tokens: Sequence[Token],
    flags: Mapping[str, tuple[int, Token]],
    env: Mapping[str, str],
    env_index: Mapping[str, int],
    hf_token: bool,
) -> Server:
    """A server that names its model on its command line (vLLM, TGI, SGLang) or in MODEL_ID."""
    cpath = container.path
    model_token = _model_argument(tokens, flags)
    model_path: FieldPath = (*cpath, model_token.field) if model_token else cpath
    model = model_token.text if model_token else None
    if model is None and "MODEL_ID" in env_index:
        model = env.get("MODEL_ID")
        model_path = (*cpath, "env", env_index["MODEL_ID"])
    model_kind = _model_kind(model)
    cache = _server_cache(name, container, flags, env, _home(container, template))
    load_format = _flag(flags, "--load-format")
    streaming = (
        load_format is not None
        and load_format.text in _STREAMING_FORMATS
        and (model_kind == "remote" or "s3://" in " ".join(t.text for t in tokens))
    )
    downloads = not _hf_offline(env) and (model_kind in ("hub", "remote") or (model_kind is None and hf_token))
    return Server(
        name,
        container,
        model,
        model_path,
        downloads,
        streaming,
        (cache,) if cache else (),
        (model,) if model_kind == "local" and model else (),
        "a Hugging Face token is set" if hf_token else "",
    )


def _loader_calls(text: str) -> Iterator[tuple[str, str | None]]:
    """(call, first literal model argument or None) of each Python model loader in `text`."""
    for match in _LOADER.finditer(text):
        call, model = match.group("call"), match.group("model")
        if call == "pipeline":
            named = _PIPELINE_MODEL.match(text, match.start())
            model = named.group("model") if named else None
            if model is None or _model_kind(model) is None:
                continue  # pipeline("text-generation") names a task, not a model
        yield call, model


def _entrypoint_field(template: PodTemplate) -> FieldPath | None:
    """Where the object holds its driver's command line (a RayJob's entrypoint), if its kind has one."""
    adapter = kind_of(template.document)
    return None if adapter is None else adapter.entrypoint


def _entrypoint(template: PodTemplate) -> str:
    """The object's driver command line (a RayJob's entrypoint, often `python -c` with inline code), lower-cased."""
    field = _entrypoint_field(template)
    value = get_path(template.document.data, field) if field is not None else None
    return str(value).lower() if isinstance(value, str) else ""


def _python_loader(
    template: PodTemplate, container: ContainerRef, env: Mapping[str, str], env_index: Mapping[str, int]
) -> Server | None:
    """Weights loaded from Python in the command, args or a RayJob entrypoint: from_pretrained, snapshot_download,
    hf_hub_download, vLLM's LLM(model=...), transformers' pipeline(model=...)."""
    sources: list[tuple[FieldPath, str]] = []
    for field in ("command", "args"):
        items = container.data.get(field)
        for i, item in enumerate(items if isinstance(items, list) else []):
            sources.append(((*container.path, field, i), str(item)))
    entrypoint = _entrypoint_field(template)
    if entrypoint is not None and _entrypoint(template):
        sources.append((entrypoint, str(get_path(template.document.data, entrypoint))))
    for where, text in sources:
        for call, model in _loader_calls(text):
            kind = _model_kind(model)
            if kind == "local":
                return Server("Python model loader", container, model, where, False, False, (), (model or "",))
            named = model if kind else None
            return _code_download(template, container, env, call, named, where, f"its code calls {call}() at start")
    return None


def _hf_offline(env: Mapping[str, str]) -> bool:
    """Hugging Face offline mode: the Hub libraries read only what is on disk and download nothing."""
    return env.get("HF_HUB_OFFLINE", "").lower() in _TRUE or env.get("TRANSFORMERS_OFFLINE", "").lower() in _TRUE


def _code_download(
    template: PodTemplate,
    container: ContainerRef,
    env: Mapping[str, str],
    call: str,
    model: str | None,
    where: FieldPath,
    why: str,
) -> Server | None:
    """Python code that downloads `model` (None: a model it does not name) with `call` at every start (None: Hugging
    Face offline mode is set, so the code reads what is on disk)."""
    if _hf_offline(env):
        return None
    cache = hf_cache_dir(env, _home(container, template))
    return Server(
        f"Python code calling {call}()", container, model, where, True, False, (cache,) if cache else (), (), why
    )


def _configmap_loader(template: PodTemplate, container: ContainerRef, ctx: RuleContext) -> Server | None:
    """Python code in a ConfigMap of the input that the container mounts and that loads weights at start."""
    if not ctx.documents_of("ConfigMap"):
        return None  # no ConfigMap in the input: do not join the container's mounts for nothing
    for view in mounts(template, container):
        if view.source != "configMap" or view.volume is None:
            continue
        name = as_mapping(view.volume.get("configMap")).get("name")
        for doc in ctx.documents_of("ConfigMap"):
            if doc.metadata.get("name") != name or not _same_namespace(
                doc.metadata.get("namespace"), template.document.metadata.get("namespace")
            ):
                continue
            for key, value in as_mapping(doc.data.get("data")).items():
                for call, model in _loader_calls(str(value)):
                    kind = _model_kind(model)
                    if kind == "local":
                        continue
                    env, _index = _env(container)
                    where = (*container.path, "volumeMounts", view.index)
                    why = f"its code in ConfigMap '{name}' ({key}) calls {call}() at start"
                    return _code_download(template, container, env, call, model if kind else None, where, why)
    return None


def _kserve_storage(container: ContainerRef, env: Mapping[str, str], env_index: Mapping[str, int]) -> Server | None:
    """KServe's storage initializer: a `storageUri` on the runtime (or `model:`) spec, or a STORAGE_URI env."""
    uri = container.data.get("storageUri")
    where: FieldPath = (*container.path, "storageUri")
    if not isinstance(uri, str) and "STORAGE_URI" in env:
        uri = env["STORAGE_URI"]
        where = (*container.path, "env", env_index["STORAGE_URI"])
    # A placeholder after a remote scheme (s3://${bucket}/...) does not decide: any such URI is downloaded.
    if not isinstance(uri, str) or not (_known(uri) or _REMOTE.match(uri)):
        return None
    cached = uri.startswith(("pvc://", "oci://"))
    return Server("KServe", container, uri, where, not cached, False, (), ())


def _is_hf_runtime(container: ContainerRef) -> bool:
    """KServe's Hugging Face runtime: `modelFormat: {name: huggingface}` or the `huggingface:` predictor key."""
    model_format = container.data.get("modelFormat")
    named = isinstance(model_format, Mapping) and str(model_format.get("name", "")).lower() == "huggingface"
    return named or container.path[-1] == "huggingface"


@dataclass(frozen=True)
class MountView:
    """A container's volume mount joined with the pod volume it names."""

    index: int
    mount: Mapping[str, Any]
    mount_path: str
    volume: Mapping[str, Any] | None
    source: str | None

    @property
    def read_only(self) -> bool:
        if self.mount.get("readOnly") is True:
            return True
        spec = self.volume.get(self.source) if self.volume and self.source else None
        return isinstance(spec, Mapping) and spec.get("readOnly") is True


def mounts(template: PodTemplate, container: ContainerRef) -> tuple[MountView, ...]:
    """The container's volume mounts joined with the pod's volumes (a container belongs to one template), found
    once per container: three rules and the cold-start estimate ask."""
    return memoised(container, "models.mounts", _mounts, template, container)


def _mounts(template: PodTemplate, container: ContainerRef) -> tuple[MountView, ...]:
    volumes = memoised(template, "models.volumes", _volumes_by_name, template)
    out: list[MountView] = []
    items = container.data.get("volumeMounts")
    if not isinstance(items, list):
        return ()
    for i, mount in enumerate(items):
        if not is_mapping(mount) or not isinstance(mount.get("mountPath"), str):
            continue
        volume = volumes.get(str(mount.get("name")))
        source = next((k for k in volume if k != "name"), None) if volume else None
        out.append(MountView(i, mount, mount["mountPath"].rstrip("/") or "/", volume, source))
    return tuple(out)


def _volumes_by_name(template: PodTemplate) -> dict[str, Mapping[str, Any]]:
    return {str(v.get("name")): v for v in template.volumes}


def _under(path: str, root: str) -> bool:
    path = path.rstrip("/") or "/"
    return root == "/" or path == root or path.startswith(root + "/")


def mount_for(views: Sequence[MountView], path: str) -> MountView | None:
    """The deepest mount that holds `path` (nested mounts: the deeper one wins), or None."""
    holding = [v for v in views if _under(path, v.mount_path)]
    return max(holding, key=lambda v: len(v.mount_path)) if holding else None


def _server_containers(template: PodTemplate, ctx: RuleContext) -> list[ContainerRef]:
    """App containers that request accelerators; all app containers when the pod asks by annotation only."""
    gpu = [c for c, _ in gpu_containers(template, ctx.accelerator_resources)]
    return gpu or [c for c in template.containers if c.kind == "container"]


def _cached_uris(ctx: RuleContext) -> set[str]:
    """Storage URIs that a KServe LocalModelCache (or ClusterLocalModel) in the input caches on nodes."""
    uris: set[str] = set()
    for doc in ctx.documents_of(*sorted(_LOCAL_CACHE_KINDS)):
        data = doc.data
        if isinstance(data, dict):
            spec = data.get("spec")
            if isinstance(spec, Mapping) and isinstance(spec.get("sourceModelUri"), str):
                uris.add(spec["sourceModelUri"].rstrip("/"))
    return uris


def _check_cache_missing(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    for container in _server_containers(template, ctx):
        server = recognise(template, container) or _configmap_loader(template, container, ctx)
        if server is None:
            continue
        what = f"{server.name} in container '{container.name}'" if container.name else server.name
        if server.streaming:
            yield RawFinding(
                server.model_path,
                f"{what} streams weights from object storage at every start ({_object_uri(server)}): no "
                "node-local or "
                "shared copy, so each replica and restart reads the whole model over the network; fine when the "
                "store is close and fast, otherwise cache on node NVMe or a read-only PVC",
                severity=Severity.INFO,
            )
            continue
        if server.name in ("KServe", "KServe LLMInferenceService") and server.model and server.downloads:
            if server.model.rstrip("/") in _cached_uris(ctx):  # only KServe pays for the scan
                continue
            yield RawFinding(
                server.model_path,
                f"{what}: storage URI '{server.model}' is downloaded into an emptyDir of every new pod (the storage "
                "initializer) before the server can start; use pvc://, an oci:// model car, or a LocalModelCache "
                "for this URI",
            )
            continue
        # The mounts are joined only for a server with directories to look up (a Triton repository URI has none).
        views = mounts(template, container) if server.read_paths or server.write_paths else ()
        for path in server.read_paths:
            view = mount_for(views, path)
            if view is not None and view.source in PER_POD_SOURCES:
                filler = _init_filler(template, view)
                yield RawFinding(
                    (*container.path, "volumeMounts", view.index),
                    f"{what} reads weights from '{path}' on the {view.source} volume '{view.mount.get('name')}', "
                    f"which is empty in every new pod{filler}: weights are fetched again on each start; put them "
                    "on a node-local hostPath/local PV or a read-only PVC",
                )
        if not server.downloads:
            continue
        if not server.write_paths and server.model and _model_kind(server.model) == "remote":
            yield RawFinding(
                server.model_path,
                f"{what} fetches its models from '{server.model}' into the container at every start, with no "
                "cache that outlives the pod; put the repository on a node-local hostPath/local PV or a read-only "
                "PVC (or a CSI bucket mount)",
            )
            continue
        for path in server.write_paths:
            view = mount_for(views, path)
            if view is not None and view.source in PERSISTENT_SOURCES:
                continue
            where = (
                f"on the {view.source} volume '{view.mount.get('name')}', which starts empty in every pod"
                if view is not None
                else "on no volume at all (the container's writable layer)"
            )
            yield RawFinding(
                server.model_path,
                f"{what} downloads {server.source} at every start into '{path}', {where}: each replica and "
                "restart pulls the full weights again while its GPUs wait; mount a node-local cache "
                "(hostPath/local PV) or a read-only PVC there, or point HF_HOME/--download-dir at one",
            )


def _object_uri(server: Server) -> str:
    """The object-store URI a streaming loader reads (a --model URI or one inside the loader's extra config)."""
    if server.model and _REMOTE.match(server.model):
        return server.model
    match = _OBJECT_URI.search(" ".join(t.text for t in _tokens(server.container)))
    return match.group(0) if match else str(server.model)


def _init_filler(template: PodTemplate, view: MountView) -> str:
    name = view.mount.get("name")
    for container in template.containers:
        if container.kind == "init":
            items = container.data.get("volumeMounts")
            if isinstance(items, list) and any(isinstance(m, Mapping) and m.get("name") == name for m in items):
                return f" (filled by init container '{container.name}')"
    return ""


def _pvc_modes(ctx: RuleContext, claim: str, namespace: str | None) -> list[str] | None:
    for doc in ctx.documents_of("PersistentVolumeClaim"):
        if doc.ref.name == claim and _same_namespace(doc.ref.namespace, namespace):
            modes = as_mapping(doc.data.get("spec")).get("accessModes")
            return [str(m) for m in modes] if isinstance(modes, list) else []
    return None


def _same_namespace(a: str | None, b: str | None) -> bool:
    """Objects without a namespace land in whatever namespace they are applied to: treat them as matching."""
    return a is None or b is None or a == b


def _shared_reason(template: PodTemplate, view: MountView, ctx: RuleContext) -> str | None:
    if view.source == "hostPath":
        return "a hostPath, shared by every pod on the node"
    if view.source in _SHARED_FILESYSTEMS:
        return f"an {view.source} network filesystem shared by every pod that mounts it"
    if view.source == "persistentVolumeClaim" and view.volume is not None:
        claim = str(as_mapping(view.volume.get("persistentVolumeClaim")).get("claimName") or "")
        modes = _pvc_modes(ctx, claim, template.document.ref.namespace)
        shared = sorted({"ReadWriteMany", "ReadOnlyMany"} & set(modes or []))
        if shared:
            return f"PVC '{claim}' ({', '.join(shared)})"
        if modes is None and (template.replicas is None or template.replicas > 1):
            count = "an autoscaled number of" if template.replicas is None else str(template.replicas)
            return f"PVC '{claim}', mounted by {count} replicas"
    return None


# Volume sources `_shared_reason` can name: a pod with none of them has no shared cache to report.
_SHAREABLE_SOURCES = frozenset({"hostPath", "persistentVolumeClaim", *_SHARED_FILESYSTEMS})


def _check_writable_shared(template: PodTemplate, ctx: RuleContext) -> Iterator[RawFinding]:
    volumes = memoised(template, "models.volumes", _volumes_by_name, template)
    if all(_SHAREABLE_SOURCES.isdisjoint(volume) for volume in volumes.values()):
        return  # checked before recognising servers: most pods mount no shareable volume
    for container in _server_containers(template, ctx):
        server = recognise(template, container) or _configmap_loader(template, container, ctx)
        if server is None:
            continue
        views = mounts(template, container)
        relevant: dict[int, MountView] = {}
        for path in (*server.write_paths, *server.read_paths):
            view = mount_for(views, path)
            if view is not None:
                relevant[view.index] = view
        for view in views:  # a mount inside the cache directory (e.g. HF_HOME=/cache, mount at /cache/hub)
            if any(_under(view.mount_path, p) for p in server.write_paths):
                relevant[view.index] = view
        for index in sorted(relevant):
            view = relevant[index]
            if view.read_only:
                continue
            reason = _shared_reason(template, view, ctx)
            if reason is None:
                continue
            writes = any(_under(p, view.mount_path) or _under(view.mount_path, p) for p in server.write_paths)
            if writes and view.source == "hostPath":
                continue  # a node-local download cache: local file locks serialise writers
            mount_path = (*container.path, "volumeMounts", view.index)
            edit = Edit("replace" if "readOnly" in view.mount else "add", (*mount_path, "readOnly"), True)
            if writes:
                fix = Fix(
                    "mount the cache read-only (the server downloads into it: fill it from one Job first)",
                    Safety.UNSAFE,
                    (edit,),
                )
                tail = "the server also downloads into it, so fill the cache from one Job and mount it read-only here"
            else:
                fix = Fix("mount the model cache read-only", Safety.SAFE, (edit,))
                tail = "the server only reads it, so mount it readOnly: true"
            yield RawFinding(
                mount_path,
                f"container '{container.name}' mounts the model cache '{view.mount_path}' read-write from {reason}: "
                "one replica's interrupted download or bad write is served to every other, and concurrent writers "
                f"race on network filesystems; {tail}",
                fix,
            )


# --- inference-scale-to-zero -----------------------------------------------------------------------------------

_KNATIVE_MIN = ("autoscaling.knative.dev/min-scale", "autoscaling.knative.dev/minScale")
_KNATIVE_CLASS = "autoscaling.knative.dev/class"


def _gpu_templates(doc: Document, ctx: RuleContext) -> list[PodTemplate]:
    return [t for t in pod_templates(doc) if uses_accelerators(t, ctx.accelerator_resources)]


def _target(ctx: RuleContext, scaler: Document, ref: Any, default_kind: str) -> Document | None:
    """The scale target named by an autoscaler's scaleTargetRef, when it is in the input."""
    if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str):
        return None
    ctx.whole_input(scaler)  # declares the read; the kind index below answers it without a scan
    kind = str(ref.get("kind") or default_kind).lower()
    for indexed_kind, docs in ctx.documents_by_kind.items():
        if indexed_kind.lower() != kind:
            continue
        for doc in docs:
            if doc.ref.name == ref["name"] and _same_namespace(doc.ref.namespace, scaler.ref.namespace):
                return doc
    return None


def _int_value(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


_COLD = "the next request waits for a GPU node, the image pull and the model load: minutes for a large model"


def _check_scale_to_zero(doc: Document, ctx: RuleContext) -> Iterator[RawFinding]:
    spec = doc.data.get("spec") if is_mapping(doc.data) else None
    if not is_mapping(spec):
        return
    check = _SCALERS.get((doc.api_version.split("/")[0], doc.kind))
    if check is not None:
        yield from check(doc, spec, ctx)


def _hpa_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    minimum = _int_value(spec.get("minReplicas"))
    target = _target(ctx, doc, spec.get("scaleTargetRef"), "Deployment")
    if minimum == 0 and target is not None and _gpu_templates(target, ctx):
        yield RawFinding(
            ("spec", "minReplicas"),
            f"HPA minReplicas 0 scales the GPU {target.kind} '{target.ref.name}' to zero "
            f"(HPAScaleToZero): {_COLD}; keep at least one warm replica",
            Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", ("spec", "minReplicas"), 1),)),
        )


def _keda_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    target = _target(ctx, doc, spec.get("scaleTargetRef"), "Deployment")
    if target is None or not _gpu_templates(target, ctx):
        return
    minimum = _int_value(spec.get("minReplicaCount"))
    name = f"the GPU {target.kind} '{target.ref.name}'"
    if "minReplicaCount" not in spec:
        yield RawFinding(
            ("spec",),
            f"KEDA ScaledObject has no minReplicaCount, and KEDA's default is 0: it scales "
            f"{name} to zero when idle; {_COLD}; set minReplicaCount: 1 or more",
            Fix("keep one warm replica", Safety.UNSAFE, (Edit("add", ("spec", "minReplicaCount"), 1),)),
        )
    elif minimum == 0:
        yield RawFinding(
            ("spec", "minReplicaCount"),
            f"KEDA minReplicaCount 0 scales {name} to zero when idle; {_COLD}",
            Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", ("spec", "minReplicaCount"), 1),)),
        )
    if _int_value(spec.get("idleReplicaCount")) == 0 and (minimum or 0) > 0:
        yield RawFinding(
            ("spec", "idleReplicaCount"),
            f"KEDA idleReplicaCount 0 scales {name} to zero whenever "
            f"no trigger is active, below minReplicaCount; {_COLD}",
            Fix("drop idleReplicaCount", Safety.UNSAFE, (Edit("remove", ("spec", "idleReplicaCount")),)),
        )


def _vllm_runtime_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    # vllm-project/production-stack vllmruntime_types.go: autoscalingConfig (KEDA) minReplicas, default 1
    scaling = spec.get("autoscalingConfig")
    if (
        isinstance(scaling, Mapping)
        and scaling.get("enabled") is True
        and _int_value(scaling.get("minReplicas")) == 0
        and _gpu_templates(doc, ctx)
    ):
        yield RawFinding(
            ("spec", "autoscalingConfig", "minReplicas"),
            f"VLLMRuntime '{doc.ref.name}' autoscalingConfig.minReplicas 0 lets KEDA scale its GPU "
            f"pods to zero when idle: {_COLD}; keep at least one warm replica",
            Fix(
                "keep one warm replica",
                Safety.UNSAFE,
                (Edit("replace", ("spec", "autoscalingConfig", "minReplicas"), 1),),
            ),
        )


def _knative_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    for template in _gpu_templates(doc, ctx):
        yield from _knative(template)


def _kserve_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    for template in _gpu_templates(doc, ctx):
        component = template.spec
        if template.path[-1] == "workerSpec":
            continue
        if _int_value(component.get("minReplicas")) == 0:
            yield RawFinding(
                (*template.path, "minReplicas"),
                f"KServe {template.role} minReplicas 0 lets the autoscaler (Knative in Serverless "
                f"mode, KEDA in Standard mode) scale the GPU model server to zero; {_COLD}; keep at "
                "least 1 (KServe's default)",
                Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", (*template.path, "minReplicas"), 1),)),
            )


def _ray_service_to_zero(doc: Document, spec: Mapping[str, Any], ctx: RuleContext) -> Iterator[RawFinding]:
    if not _gpu_templates(doc, ctx):
        return
    for name in _ray_serve_scale_to_zero(spec.get("serveConfigV2")):
        yield RawFinding(
            ("spec", "serveConfigV2"),
            f"Ray Serve deployment '{name}' asks for GPUs with autoscaling_config.min_replicas 0: "
            f"Serve drops its last replica when idle and the GPU worker can be released; {_COLD}; "
            "set min_replicas: 1",
        )


# Each autoscaler (and each serving kind with its own), by API group and kind: what scales GPU pods to zero.
_SCALERS: Mapping[tuple[str, str], Callable[[Document, Mapping[str, Any], RuleContext], Iterator[RawFinding]]] = {
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa_to_zero,
    ("keda.sh", "ScaledObject"): _keda_to_zero,
    ("production-stack.vllm.ai", "VLLMRuntime"): _vllm_runtime_to_zero,
    ("serving.knative.dev", "Service"): _knative_to_zero,
    ("serving.kserve.io", "InferenceService"): _kserve_to_zero,
    ("ray.io", "RayService"): _ray_service_to_zero,
}


def _ray_serve_scale_to_zero(config: Any) -> Iterator[str]:
    """GPU deployments of a Ray Serve config (serveConfigV2 text) whose autoscaling minimum is 0 replicas."""
    if not isinstance(config, str) or len(config) > 1_000_000 or ("&" in config and "*" in config):
        return  # embedded YAML with anchors and aliases is not expanded here (no alias-bomb guard at this level)
    try:
        parsed = yaml.safe_load(config)
    except yaml.YAMLError:
        return
    applications = parsed.get("applications") if isinstance(parsed, Mapping) else None
    for application in applications if isinstance(applications, list) else []:
        deployments = application.get("deployments") if isinstance(application, Mapping) else None
        for deployment in deployments if isinstance(deployments, list) else []:
            if not isinstance(deployment, Mapping):
                continue
            autoscaling = deployment.get("autoscaling_config")
            actor = deployment.get("ray_actor_options")
            gpus = actor.get("num_gpus") if isinstance(actor, Mapping) else None
            if (
                isinstance(autoscaling, Mapping)
                and _int_value(autoscaling.get("min_replicas")) == 0
                and isinstance(gpus, (int, float))
                and not isinstance(gpus, bool)
                and gpus > 0
            ):
                yield str(deployment.get("name") or "?")


def _knative(template: PodTemplate) -> Iterator[RawFinding]:
    annotations = template.annotations
    meta = template.metadata_path or ("spec", "template", "metadata")
    key = next((k for k in _KNATIVE_MIN if k in annotations), None)
    if key is not None:
        if _int_value(annotations[key]) == 0:
            yield RawFinding(
                (*meta, "annotations", key),
                f'Knative {key}: "0" lets the GPU revision scale to zero; {_COLD}',
                Fix("keep one warm replica", Safety.UNSAFE, (Edit("replace", (*meta, "annotations", key), "1"),)),
            )
        return
    if str(annotations.get(_KNATIVE_CLASS, "kpa.autoscaling.knative.dev")).startswith("hpa."):
        return  # the HPA class never scales to zero; its minimum defaults to 1
    metadata = get_path(template.document.data, meta)
    if isinstance(metadata, Mapping) and isinstance(metadata.get("annotations"), Mapping):
        edit = Edit("add", (*meta, "annotations", _KNATIVE_MIN[0]), "1")
        path: FieldPath = (*meta, "annotations")
    elif isinstance(metadata, Mapping):
        edit = Edit("add", (*meta, "annotations"), {_KNATIVE_MIN[0]: "1"})
        path = meta
    else:
        edit = Edit("add", meta, {"annotations": {_KNATIVE_MIN[0]: "1"}})
        path = meta[:-1]
    yield RawFinding(
        path,
        "Knative revision template has no autoscaling.knative.dev/min-scale; with the default "
        "KPA class and scale-to-zero enabled (Knative's defaults) the minimum is 0, so the GPU service "
        f"scales to zero when idle; {_COLD}",
        Fix("keep one warm replica", Safety.UNSAFE, (edit,)),
    )


MODEL_CACHE_MISSING = Rule(
    code="KG401",
    name="model-cache-missing",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="An inference server downloads its weights into each pod instead of reading a cache volume.",
    target=Target.TEMPLATE,
    check=_check_cache_missing,
    rationale="A cold replica of a large model moves tens to hundreds of GB before it can serve; downloading them "
    "from the Hub or object storage at every start multiplies that by replicas and restarts, hits Hub rate limits, "
    "and keeps GPUs idle. Recognised servers: vLLM and llm-d, SGLang, TGI, Triton (and TensorRT-LLM on Triton), "
    "NVIDIA NIM, KServe (storageUri, the Hugging Face runtime, LLMInferenceService) and Ray Serve (a RayService "
    "whose serve config uses Hugging Face libraries), and Python code in any GPU pod that loads weights at start "
    "(from_pretrained, snapshot_download, hf_hub_download, vLLM's LLM(model=...), transformers' "
    "pipeline(model=...)) in a command, args, a RayJob entrypoint or a ConfigMap of the input mounted into the "
    "pod; code fetched at run time (a runtime_env working_dir archive) is out of sight. A cache is a volume "
    "that outlives the pod mounted where the "
    "server downloads (HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME/hub, --download-dir, NIM_CACHE_PATH, TGI's "
    "/data) or where it reads a local model path: a PVC, hostPath, NFS, CSI or image volume. emptyDir and generic "
    "ephemeral volumes start empty in every pod, so they are not caches. A local model path on no volume is baked "
    "into the image and passes; HF_HUB_OFFLINE=1 passes (set it when a Hub id names weights baked into the "
    "image's cache, which otherwise still asks the Hub at every start). KServe pvc:// and oci:// URIs, or a "
    "LocalModelCache for the URI in the input, pass. Streaming loaders (Run:ai streamer, tensorizer) from object "
    "storage are reported at info severity: they avoid the disk but still read the whole model per replica.",
    bad_example="args: [--model, meta-llama/Llama-3.1-8B-Instruct]   # no volume at /root/.cache/huggingface",
    good_example="args: [--model, meta-llama/Llama-3.1-8B-Instruct, --download-dir, /models]\n"
    "volumeMounts: [{name: weights, mountPath: /models, readOnly: true}]\n"
    "volumes: [{name: weights, persistentVolumeClaim: {claimName: llama-weights}}]",
)
MODEL_CACHE_WRITABLE_SHARED = Rule(
    code="KG402",
    name="model-cache-writable-shared",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A shared model cache (RWX/ROX PVC, hostPath, NFS) is mounted read-write into an inference server.",
    target=Target.TEMPLATE,
    check=_check_writable_shared,
    fixable=True,
    rationale="A cache shared by many replicas should be filled once (a Job, an init step on one node) and read "
    "by every server: a read-write mount lets one replica's interrupted or corrupt download become every "
    "replica's weights, and Hugging Face's file locks are unreliable on network filesystems. A volume counts as "
    "shared when it is a hostPath, an NFS/CephFS/GlusterFS/Azure Files volume, a PVC whose claim in the input is "
    "ReadWriteMany or ReadOnlyMany, or a PVC (claim not in the input) mounted by more than one replica. A "
    "hostPath the server downloads into is the node-local cache pattern (writers on one node are "
    "serialised by local file locks) and passes; a hostPath it only reads is flagged. The fix sets readOnly: true "
    "on the mount; it is safe when the server only reads that path (a local --model path), unsafe when its "
    "download directory (HF_HOME, --download-dir, ...) is on the mount.",
    bad_example="volumeMounts: [{name: weights, mountPath: /models}]   # PVC ReadOnlyMany, --model /models/llama",
    good_example="volumeMounts: [{name: weights, mountPath: /models, readOnly: true}]",
)
INFERENCE_SCALE_TO_ZERO = Rule(
    code="KG403",
    name="inference-scale-to-zero",
    practice=_PRACTICE,
    severity=Severity.WARNING,
    summary="A GPU inference workload can scale to zero (HPA/KEDA/Knative/KServe minimum of 0 replicas).",
    target=Target.DOCUMENT,
    kinds=frozenset(
        {"HorizontalPodAutoscaler", "ScaledObject", "VLLMRuntime", "Service", "InferenceService", "RayService"}
    ),
    check=_check_scale_to_zero,
    gpu_only=False,
    fixable=True,
    rationale="With no warm replica the first request after an idle period waits for a GPU node, the 10-30 GB "
    "image and the model load: minutes for large models. Flagged: an HPA with minReplicas 0 (needs the "
    "HPAScaleToZero gate) whose target in the input uses GPUs; a KEDA ScaledObject with minReplicaCount 0 or "
    "absent (KEDA's default is 0) or idleReplicaCount 0; a RayService whose Serve config gives a GPU deployment "
    "(ray_actor_options.num_gpus in the config) autoscaling_config.min_replicas 0 (Ray Serve's default is 1); a "
    'Knative Service whose GPU revision sets min-scale "0" or omits it (under the default KPA class with '
    "scale-to-zero enabled the minimum defaults to 0; the HPA class "
    "is exempt); a KServe InferenceService component with minReplicas 0 (KServe's default is 1). Scaling to zero "
    "can be a deliberate cost choice: suppress with a reason then. The fix (unsafe: it keeps a GPU allocated) sets "
    "the minimum to 1.",
    bad_example="kind: ScaledObject\nspec:\n  scaleTargetRef: {name: vllm}\n  triggers: [...]",
    good_example="kind: ScaledObject\nspec:\n  scaleTargetRef: {name: vllm}\n  minReplicaCount: 1\n  triggers: [...]",
)

RULES: tuple[Rule, ...] = (MODEL_CACHE_MISSING, MODEL_CACHE_WRITABLE_SHARED, INFERENCE_SCALE_TO_ZERO)
