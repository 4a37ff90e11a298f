"""The Content-Security-Policy every HTML page the platform writes carries (a leaf module: the
letter, the inquiry and the reports all import it without importing each other)."""

from __future__ import annotations

import re

# What a page the platform writes may load: its own inline styles, images and fonts as data: URLs,
# nothing from the network or the disk (a file:// page may otherwise frame any local file). Pages
# with plots also run their own inline scripts (plotly.js is inlined whole).
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"
SCRIPTED_PAGE_CSP = PAGE_CSP + "; script-src 'unsafe-inline'"


def csp_meta(policy: str = PAGE_CSP) -> str:
    """The policy as the page's first head element, so that it covers everything after it."""
    return f'<meta http-equiv="Content-Security-Policy" content="{policy}">'


def with_csp(page: str, policy: str = PAGE_CSP) -> str:
    """`page` with the policy right after its <head> (or first): a page that carries a looser one
    or none is held to this one too (every policy present applies)."""
    head = re.search(r"<head[^>]*>", page, re.I)
    return page[:head.end()] + csp_meta(policy) + page[head.end():] if head else csp_meta(policy) + page
