"""Language models as the audits use them: loaded, scored, made to generate.

- `loading`: `load_model(...)` -> `LoadedModel` (HF directories, GGUF files, shipped PyPI models;
  device, dtype, NF4), whose `encode` decides the start tokens every NLL depends on;
- `nll`: exact whole-sentence NLL for many sentences sharing prefixes (the prefix-tree engine);
- `batching`: padded, length-sorted batches for whole-sequence model calls;
- `precision`: verdicts equal to float32's when scoring in bf16, fp16 or NF4 (re-scoring close calls);
- `generation`: greedy and sampled generation, continuation log-likelihoods.
- `endpoint`: models served behind an OpenAI-compatible server (vLLM, ...): prompt log-probability
  NLLs equal to the engine's from token-id prompts, greedy completions, the registration probe.
- `vllm_server`: start vLLM (installed in `.vllm-venv` by `scripts/setup_vllm.sh`) on 127.0.0.1 for a local directory.
"""
