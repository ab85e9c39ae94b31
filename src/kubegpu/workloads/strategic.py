"""A strategic merge patch over the pod-spec fields controllers merge (containers by name, volume mounts by path):
what a TrainJob's runtimePatches and KServe's LLMInferenceServiceConfig presets do to a pod template.

Follows kubernetes v1.35 apimachinery strategicpatch with the core/v1 patchMergeKey tags; any list without a
merge key (tolerations, args, nodeSelectorTerms) is replaced, and a null in the patch leaves the value alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubegpu.manifests.document import mapping_items

# Lists that merge item by item, and the key that matches items (core/v1 patchMergeKey tags; JobSet's
# replicatedJobs by name).
MERGE_KEYS: Mapping[str, str] = {
    "replicatedJobs": "name",
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
    "ports": "containerPort",
}


def merge(
    base: Mapping[str, Any], patch: Mapping[str, Any], existing_only: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """`patch` merged into `base`; lists named in `existing_only` merge only the items `base` has (a TrainJob's
    webhook rejects a patch that names a container its runtime lacks)."""
    out = dict(base)
    for key, value in patch.items():
        if value is None:
            continue
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = merge(current, value, existing_only)
        elif isinstance(value, list) and key in MERGE_KEYS:
            out[key] = merge_list(key, mapping_items(current), value, existing_only)
        else:
            out[key] = value
    return out


def merge_list(
    field: str, base: list[Mapping[str, Any]], patch: object, existing_only: frozenset[str] = frozenset()
) -> list[Mapping[str, Any]]:
    """The items of `patch` merged into `base` by the field's merge key; a new item is appended."""
    merge_key = MERGE_KEYS[field]
    out = list(base)
    for item in mapping_items(patch):
        key = item.get(merge_key)
        index = None if key is None else next((i for i, old in enumerate(out) if old.get(merge_key) == key), None)
        if index is not None:
            out[index] = merge(out[index], item, existing_only)
        elif field not in existing_only:
            out.append(dict(item))
    return out
