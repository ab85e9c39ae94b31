"""kubegpu.webhook: the admission webhook that applies safe fixes to GPU pods and denies the rest.

`review` is the pure decision; `create_app` the ASGI transport; `serve` runs it over HTTPS.
"""

from __future__ import annotations

from kubegpu.webhook.app import create_app
from kubegpu.webhook.metrics import Metrics
from kubegpu.webhook.review import Decision, MalformedReview, WebhookConfig, review

__all__ = ["Decision", "MalformedReview", "Metrics", "WebhookConfig", "create_app", "review"]
