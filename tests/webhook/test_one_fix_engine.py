"""One fix engine: the webhook's JSON Patch gives the pod that `kubegpu fix` writes for the same pod."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonpatch
import pytest

from kubegpu.fix.engine import fix_text
from kubegpu.fix.model import FixOptions
from kubegpu.lint import lint_text
from kubegpu.webhook import WebhookConfig, review

CONFIG = WebhookConfig()
# the GPU pod creations the webhook answers (not the update, not the excluded namespace)
REVIEWS = [
    p
    for p in sorted((Path(__file__).parent / "reviews").glob("gpu-*.json"))
    if json.loads(p.read_text())["request"].get("operation") == "CREATE"
    and not CONFIG.excluded(json.loads(p.read_text())["request"].get("namespace", ""))
]


def _lint(name: str, text: str) -> Any:
    return lint_text(name, text, CONFIG.lint).findings


@pytest.mark.parametrize("path", REVIEWS, ids=[p.stem for p in REVIEWS])
def test_the_webhook_patch_and_kubegpu_fix_give_the_same_pod(path: Path) -> None:
    body = json.loads(path.read_text())
    pod = body["request"]["object"]
    decision = review(body, "mutate", CONFIG)
    assert not decision.skipped
    inner = decision.response["response"]
    ops = json.loads(base64.b64decode(inner["patch"])) if "patch" in inner else []
    via_webhook = jsonpatch.apply_patch(pod, ops) if ops else pod
    outcome = fix_text(
        "pod.json", json.dumps(pod, indent=2) + "\n", _lint, FixOptions(max_passes=CONFIG.max_fix_passes)
    )
    assert outcome.error is None
    assert via_webhook == json.loads(outcome.fixed)
    # the same fixes; their order follows the lines of each text (the webhook lints the pod as one line)
    assert sorted(decision.rules) == sorted(a.code for a in outcome.applied)
