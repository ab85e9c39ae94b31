"""kubegpu.fix."""
