"""What kubegpu knows of GPU inference serving, read by lint's rules, `coldstart` and `live`: the inference servers
and their model sources, what KServe supplies to a predictor's container, and the cold-start model."""
