"""Model loading rules: inference cold starts (weights downloaded per pod, shared caches writable, no warm pool).

The inference servers they recognise and where those read weights are `kubegpu.serving.servers`.
"""

from __future__ import annotations

from kubegpu.ruleapi import Rule
from kubegpu.rules.models.inference_scale_to_zero import INFERENCE_SCALE_TO_ZERO
from kubegpu.rules.models.model_cache_missing import MODEL_CACHE_MISSING
from kubegpu.rules.models.model_cache_writable_shared import MODEL_CACHE_WRITABLE_SHARED

RULES: tuple[Rule, ...] = (MODEL_CACHE_MISSING, MODEL_CACHE_WRITABLE_SHARED, INFERENCE_SCALE_TO_ZERO)
