"""Cue-resistant memorization (CRM, Luo et al.): generations in, memorization not explained by the
prompt's own cues out.

- `examples`: the paradigms' prompts and targets (verbatim, associative, extraction, canaries)
  and `run_examples`, which asks the model; `cue`: how much of a target a prompt already shows;
- `metrics`: hit rates counted only where the cue is low, per paradigm.
"""
