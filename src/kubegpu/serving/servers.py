"""The inference server in a container (vLLM, SGLang, TGI, Triton, NIM, KServe, Ray Serve, Python loaders), where
it takes its model weights from and where it caches them; and a container's volume mounts joined with the pod's volumes.

Read by the model-loading rules, the cold-start model (`serving/coldstart.py`) and `coldstart`. Defaults follow
huggingface_hub (HF_HUB_CACHE > HUGGINGFACE_HUB_CACHE > HF_HOME/hub), vLLM/SGLang/TGI CLI flags, KServe v0.15
(storage initializer) and Ray Serve 2.x.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubegpu.manifests import (
    ContainerRef,
    Document,
    FieldPath,
    PodTemplate,
    as_mapping,
    get_path,
    is_mapping,
    memoised,
)
from kubegpu.workloads import kind_of

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
_HF_TOKENS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_TOKEN")
REMOTE_URI = re.compile(r"^(?:s3|gs|gcs|az|abfss?|wasbs?|https?|hf|oss|r2)://", re.IGNORECASE)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_STREAMING_FORMATS = frozenset({"runai_streamer", "runai_streamer_sharded", "tensorizer"})
_RAY_HF_HINT = re.compile(
    r"transformers|diffusers|vllm|huggingface|sentence[-_]transformers|from_pretrained|"
    r"model_id|llm_configs|ray\[llm\]"
)
_TRUE = frozenset({"1", "true", "yes", "on"})
# Words that make a container worth recognising; plain substring tests (no regex alternation scan) because
# every GPU container is tested and most match none.
_SERVER_HINTS = ("vllm", "text-generation", "sglang", "triton", "nvcr.io/nim/", "llm-d")
_LOADER_HINTS = ("from_pretrained", "snapshot_download", "hf_hub_download", "pipeline(")
_LLM_CALL = re.compile(r"\bllm\(")
# Server command lines; searched only when a plain substring test finds the server's name first.
_VLLM_COMMAND = re.compile(r"\bvllm\s+serve\b|vllm\.entrypoints")
_SGLANG_COMMAND = re.compile(r"\bsglang\s+serve\b")
_TRITON_COMMAND = re.compile(r"\btritonserver\b|triton_model_repo|--model-repository")
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
        if self.model and classify_model(self.model) in ("hub", "remote"):
            return f"'{self.model}'"
        return f"its model ({self.evidence})" if self.evidence else "its model"


_SHELL_SPECIAL = ("'", '"', "\\", "#")  # shlex.split treats nothing else specially (whitespace aside)
_SHLEX_SPACE = re.compile(r"[ \t\r\n]+")  # shlex's whitespace


def shell_tokens(container: ContainerRef) -> list[Token]:
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


def classify_model(model: str | None) -> str | None:
    if model is None or not _known(model):
        return None
    if "://" in model and REMOTE_URI.match(model):  # (most models are hub ids: no regex for them)
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
    tokens = shell_tokens(container)
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
    remote = next((v for v in values if REMOTE_URI.match(v.text)), None)
    local = tuple(v.text for v in values if classify_model(v.text) == "local")
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
    model_kind = classify_model(model)
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
            if model is None or classify_model(model) is None:
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
            kind = classify_model(model)
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


def configmap_loader(template: PodTemplate, container: ContainerRef, configmaps: Sequence[Document]) -> Server | None:
    """Python code in one of `configmaps` (the input's) that the container mounts and that loads weights at start."""
    if not configmaps:
        return None  # no ConfigMap in the input: do not join the container's mounts for nothing
    for view in mounts(template, container):
        if view.source != "configMap" or view.volume is None:
            continue
        name = as_mapping(view.volume.get("configMap")).get("name")
        for doc in configmaps:
            if doc.metadata.get("name") != name or not same_namespace(
                doc.metadata.get("namespace"), template.document.metadata.get("namespace")
            ):
                continue
            for key, value in as_mapping(doc.data.get("data")).items():
                for call, model in _loader_calls(str(value)):
                    kind = classify_model(model)
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
    if not isinstance(uri, str) or not (_known(uri) or REMOTE_URI.match(uri)):
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
    volumes = memoised(template, "models.volumes", volumes_by_name, template)
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


def volumes_by_name(template: PodTemplate) -> dict[str, Mapping[str, Any]]:
    return {str(v.get("name")): v for v in template.volumes}


def path_under(path: str, root: str) -> bool:
    path = path.rstrip("/") or "/"
    return root == "/" or path == root or path.startswith(root + "/")


def mount_for(views: Sequence[MountView], path: str) -> MountView | None:
    """The deepest mount that holds `path` (nested mounts: the deeper one wins), or None."""
    holding = [v for v in views if path_under(path, v.mount_path)]
    return max(holding, key=lambda v: len(v.mount_path)) if holding else None


def same_namespace(a: str | None, b: str | None) -> bool:
    """Objects without a namespace land in whatever namespace they are applied to: treat them as matching."""
    return a is None or b is None or a == b
