"""kubegpu.live: read a cluster (API or `kubectl get -o json` dumps) and audit its GPU state.

Entry points: `kubegpu.live.client.read_cluster` (needs the `cluster` extra),
`kubegpu.live.snapshot.load_snapshot` and `kubegpu.live.audit.audit`; the model is in `kubegpu.live.model`.
Nothing is imported here, so the manifest generators of this package load without the extra.
"""
