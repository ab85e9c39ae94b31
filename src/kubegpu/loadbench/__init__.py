"""Measure how fast a machine loads model weights (safetensors) with each loader, against its storage limit."""
