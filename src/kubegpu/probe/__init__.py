"""kubegpu.probe."""
