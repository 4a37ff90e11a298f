"""wikimem-platform's domain library: which personal facts has a language model memorized?

Wikidata extraction, canaries, scoring, CRM, MIA, registry and reports. No Dagster in here:
the Dagster layer (assets/, resources/, sensors/, expectations/) only wires these functions.

Heavy libraries (torch, scikit-learn, scipy.stats, Great Expectations) are imported inside the
functions that use them, not at module level: every Dagster step process imports the whole code
location, and the many steps that load no model would otherwise spend ~4 s of CPU importing them.
"""

import logging

__version__ = "0.1.0"


class _OfflineKernelNotice(logging.Filter):
    """bitsandbytes, imported by transformers, logs a warning on every CPU with AVX512-BF16 that it
    could not fetch an optional CPU kernel from the Hugging Face hub ("Failed to load CPU
    gemm_4bit_forward from kernels-community: No module named 'kernels'"). Offline, its built-in
    fallback is the intended path, and users read the warning as an error: dropped here, before
    anything imports bitsandbytes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to load CPU gemm_4bit_forward")


logging.getLogger("bitsandbytes.backends.cpu.ops").addFilter(_OfflineKernelNotice())
