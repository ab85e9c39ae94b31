"""kubegpu: find, explain and fix what starves or strands GPUs on Kubernetes.

The Python API is in `kubegpu.api` (see docs/api.md). This module imports nothing, so every layer may
read the version and the image reference from it.
"""

__version__ = "0.1.0"

# The image the release workflow publishes for this version (Dockerfile at the repository root); the
# webhook, probe and audit manifests run it unless told otherwise (--image).
IMAGE_REPOSITORY = "ghcr.io/kubegpu/kubegpu"
DEFAULT_IMAGE = f"{IMAGE_REPOSITORY}:{__version__}"
