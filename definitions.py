"""The code location: every asset, check, job, sensor and schedule of wikimem-platform.

Nothing is listed by hand: each area of the Dagster layer is a package, and every definition at
module scope in it is collected (`load_definitions_from_package_module`). Installed with the
project (`pip install -e .`), so `dagster ... -m definitions` and `dg` load it from any directory.
"""

import importlib
import pkgutil
import warnings

from dagster import load_definitions_from_modules
from dagster._utils.warnings import PreviewWarning

from wikimem_platform.security.files import secure_startup

# Before anything writes (issue 60): umask 077 in the code server, the daemon's and every run worker's
# process, and no start on an instance other local users can read (InsecureFilesError names each
# path, its mode and the chmod that fixes it).
secure_startup()

import assets  # noqa: E402
import expectations  # noqa: E402
import sensors  # noqa: E402
from resources import ParquetIOManager, RegistryResource, ScoringResource, placement  # noqa: E402

AREAS = (assets, expectations, sensors)


def area_modules():
    """Every module of the Dagster layer's areas, loaded together so a definition imported by
    several modules (a check's asset, a job's selection) is collected once."""
    for package in AREAS:
        yield package
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            yield importlib.import_module(module.name)


with warnings.catch_warnings():
    # The module loader is marked preview in Dagster 1.13; its behaviour is what we rely on.
    warnings.simplefilter("ignore", PreviewWarning)
    defs = load_definitions_from_modules(
        list(area_modules()),
        resources={"io_manager": ParquetIOManager(), "scoring": ScoringResource(), "model_registry": RegistryResource()},
        # Locally, run config picks `in_process` (the platform's own runs) or `multiprocess`, whose
        # `max_concurrent` fans the model x property-shard steps out over cores; $WIKIMEM_EXECUTOR
        # selects k8s_job_executor or celery_executor on a cluster (deploy/README.md).
        executor=placement.executor(),
    )
