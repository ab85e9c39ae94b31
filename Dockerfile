# syntax=docker/dockerfile:1
# The kubegpu image: `kubegpu webhook serve` (the admission webhook), `kubegpu probe` (node and pod
# checks) and `kubegpu audit --cluster` run from it. The release workflow builds it on a version tag:
#   docker build --build-arg VERSION=0.1.0 -t ghcr.io/kubegpu/kubegpu:0.1.0 .
# It runs as a non-root user with a read-only root filesystem and needs no shell at run time.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# Build stage: the wheel from this tree, installed with the server and cluster extras into a venv.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE constraints.txt ./
COPY src ./src
RUN python -m pip wheel --no-deps --wheel-dir /dist . \
 && python -m venv --without-pip /opt/kubegpu \
 && python -m pip --python /opt/kubegpu/bin/python install --compile -c constraints.txt \
        "$(ls /dist/kubegpu-*.whl)[server,cluster]" \
 && /opt/kubegpu/bin/kubegpu --version

# Runtime stage: the slim Python runtime and the venv, nothing else.
FROM ${PYTHON_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="kubegpu" \
      org.opencontainers.image.description="Find, explain and fix what starves or strands GPUs on Kubernetes" \
      org.opencontainers.image.source="https://github.com/kubegpu/kubegpu" \
      org.opencontainers.image.url="https://github.com/kubegpu/kubegpu" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /opt/kubegpu /opt/kubegpu
# bytecode was compiled at build time: nothing is written under the (read-only) root filesystem
ENV PATH=/opt/kubegpu/bin:/usr/local/bin:/usr/bin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp
# the uid the webhook Deployment and the probe manifests run as (runAsNonRoot needs a numeric user)
USER 65532:65532
ENTRYPOINT ["kubegpu"]
CMD ["--help"]
