# Image of the wikimem code location (also used for webserver, daemon, run and step containers).
#   docker build -t wikimem-platform:0.1.0 .                                   # CPU torch
#   docker build --build-arg TORCH_VARIANT=cu128 -t wikimem-platform:0.1.0-cu128 .   # CUDA torch
# TORCH_VARIANT picks the PyTorch wheel index (cpu, cu126, cu128, ...); TORCH_INDEX_URL overrides it.
ARG PYTHON_VERSION=3.11
FROM python:${PYTHON_VERSION}-slim

ARG TORCH_VARIANT=cpu
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/${TORCH_VARIANT}
# Must match the torch pin in pyproject.toml.
ARG TORCH_VERSION=2.13.0

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DAGSTER_HOME=/opt/dagster/dagster_home \
    WIKIMEM_CACHE_DIR=/var/cache/wikimem/models

# torch first, from the chosen index: `pip install .` then finds torch==2.13.0 (+cpu / +cuXXX) satisfied
# instead of pulling the default CUDA build from PyPI.
RUN pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"

WORKDIR /opt/wikimem
COPY . /opt/wikimem
# The code location (module `definitions` and the Dagster layer) is installed with the project;
# the `deploy` extra brings the K8s run launcher / job executor, Celery and the Docker run launcher.
RUN pip install ".[postgres,deploy]" \
 && mkdir -p "${DAGSTER_HOME}/storage" "${WIKIMEM_CACHE_DIR}"

EXPOSE 4000
CMD ["dagster", "code-server", "start", "-m", "definitions", "-h", "0.0.0.0", "-p", "4000"]
