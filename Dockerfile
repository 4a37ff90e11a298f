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

# `dagster-webserver` in this image is the sign-in wrapper (webserver/, `python -m webserver`): a
# deployment that starts the UI by that name (the Helm chart's webserver pod) gets sign-in; Dagster's
# unauthenticated server stays available under a name nobody types by accident.
RUN mv /usr/local/bin/dagster-webserver /usr/local/bin/dagster-webserver-without-sign-in \
 && printf '#!/bin/sh\n# the Dagster UI behind sign-in (wikimem webserver/)\nexec python -m webserver "$@"\n' > /usr/local/bin/dagster-webserver \
 && chmod 755 /usr/local/bin/dagster-webserver

# Not root: a non-root user (uid 10001) owns the instance folder, its storage and the model cache
# (private modes: secure_startup refuses folders other users can read); named volumes mounted
# there take this ownership on first use. The UI is `python -m webserver` (sign-in), port 3000.
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /opt/dagster --shell /usr/sbin/nologin wikimem \
 && chown -R wikimem:wikimem /opt/dagster "${WIKIMEM_CACHE_DIR}" \
 && chmod 700 "${DAGSTER_HOME}" "${DAGSTER_HOME}/storage" "${WIKIMEM_CACHE_DIR}"
USER 10001:10001

EXPOSE 4000 3000
CMD ["dagster", "code-server", "start", "-m", "definitions", "-h", "0.0.0.0", "-p", "4000"]
