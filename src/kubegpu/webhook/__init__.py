"""kubegpu.webhook: the admission webhook that applies safe fixes to GPU pods and denies the rest.

`review` is the pure decision and `Limits` what a server accepts (both exported here);
`kubegpu.webhook.app.create_app` is the ASGI transport and `kubegpu.webhook.server.WebhookServer` runs it
over HTTPS within `Limits`, reloading a rotated certificate. Those need the `server` extra (starlette,
uvicorn, prometheus-client), so only the pure parts are imported here: `kubegpu gen webhook` loads this
package without the extra.
"""

from __future__ import annotations

from kubegpu.webhook.limits import Limits
from kubegpu.webhook.review import Decision, MalformedReview, WebhookConfig, review

__all__ = ["Decision", "Limits", "MalformedReview", "WebhookConfig", "review"]
