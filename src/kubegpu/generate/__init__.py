"""kubegpu.generate."""
