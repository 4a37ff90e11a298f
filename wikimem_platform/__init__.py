"""wikimem-platform's domain library: which personal facts has a language model memorized?

Wikidata extraction, canaries, scoring, CRM, MIA, registry and reports. No Dagster in here:
the Dagster layer (assets/, resources/, sensors/, expectations/) only wires these functions.

Heavy libraries (torch, scikit-learn, scipy.stats, Great Expectations) are imported inside the
functions that use them, not at module level: every Dagster step process imports the whole code
location, and the many steps that load no model would otherwise spend ~4 s of CPU importing them.
"""

__version__ = "0.1.0"
