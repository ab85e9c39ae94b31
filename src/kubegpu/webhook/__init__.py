"""kubegpu.webhook: the admission webhook that applies safe fixes to GPU pods and denies the rest.

`review` is the pure decision; `create_app` the ASGI transport; `server.WebhookServer` runs it over
HTTPS within `Limits`, reloading a rotated certificate.
"""

from __future__ import annotations

from kubegpu.webhook.app import create_app
from kubegpu.webhook.limits import Limits
from kubegpu.webhook.metrics import Metrics
from kubegpu.webhook.review import Decision, MalformedReview, WebhookConfig, review

__all__ = ["Decision", "Limits", "MalformedReview", "Metrics", "WebhookConfig", "create_app",
           "review"]
