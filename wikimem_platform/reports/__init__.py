"""What people read: per-release compliance reports and the cross-model report.

- `compliance`: one release's self-contained HTML report, forget set and lineage; the shared HTML
  helpers (tables, plots, the headless-Chromium render check and PDF print);
- `across_models`: WikiMem's Table 1 and Fig. 1 over every audited release, and its HTML page.
"""
