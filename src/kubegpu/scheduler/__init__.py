"""kubegpu.scheduler."""
