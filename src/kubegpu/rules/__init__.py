"""kubegpu.rules."""
