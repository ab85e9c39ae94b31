"""kubegpu.manifests."""
