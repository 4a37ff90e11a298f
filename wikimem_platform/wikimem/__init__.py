"""WikiMem's audit (Staufer 2025): canaries and candidates in, calibrated memorization verdicts out.

- `scoring`: every canary filled with every candidate, for h, h0 and each S(h), scored in shards;
- `memorization`: calibration, M and z*, per-fact verdicts and Table-1 figures;
- `controls`: invented-person controls and each verdict's false-positive rate;
- `calibration`: the study of whether the similar-name term cancels real knowledge;
- `wording`, `prompt_sensitivity`: how much a verdict depends on the canary's wording.
"""
