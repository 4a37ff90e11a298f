"""Language models as the audits use them: loaded, scored, made to generate.

- `loading`: `load_model(...)` -> `LoadedModel` (HF directories, GGUF files, shipped PyPI models;
  device, dtype, NF4), whose `encode` decides the start tokens every NLL depends on;
- `nll`: exact whole-sentence NLL for many sentences sharing prefixes (the prefix-tree engine);
- `batching`: padded, length-sorted batches for whole-sequence model calls;
- `precision`: verdicts equal to float32's when scoring in bf16, fp16 or NF4 (re-scoring close calls);
- `generation`: greedy and sampled generation, continuation log-likelihoods.
- `scorer`: the `Scorer` protocol every audit takes (weights loaded here, a served release at any
  access level), `CachingScorer` (a persistent sentence store in front of any scorer);
- `access`: the access levels and what each can give (`Capabilities`, one table);
- `token_pass`: per-token log p and the next-token distribution in one pass (membership attacks);
- `endpoint`: models served behind an OpenAI-compatible server (vLLM, ...): prompt log-probability
  NLLs equal to the engine's from token-id prompts, greedy completions; `endpoint_client` (the
  bounded HTTP client) and `endpoint_probe` (the registration probe) beside it.
- `vllm_server`: start vLLM (installed in `.vllm-venv` by `scripts/setup_vllm.sh`) on 127.0.0.1 for a local directory.
"""
