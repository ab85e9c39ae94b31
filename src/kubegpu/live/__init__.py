"""kubegpu.live."""
