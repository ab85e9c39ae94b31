"""kubegpu.sim."""
