"""wikimem-platform's domain library: which personal facts has a language model memorized?

Wikidata extraction, canaries, scoring, CRM, MIA, registry and reports. No Dagster in here:
the Dagster layer (assets/, resources/, sensors/, expectations/) only wires these functions.
"""

__version__ = "0.1.0"
