"""kubegpu.topology."""
