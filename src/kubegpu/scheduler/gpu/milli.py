"""The unit of GPU sharing: a whole GPU is MILLI thousandths (the FGD artifact's gpu-milli), in every GPU module."""

MILLI = 1000
