"""The GPU scoring path, measured: engine vs naive batching per shipped model and dtype, and the
paper-scale audit timed on a randomly initialized model of Llama-3.1-8B's exact shape.

Part 1, per shipped model and dtype (CUDA: bfloat16 and NF4 with double quantization; float32
as the reference): the `bench_nll.py` workload scored by the naive full-sentence batching and by
the prefix-tree engine in the same dtype: sentences/s, their ratio, max |dNLL| engine vs naive
(and vs the float32 engine), the automatic batch size and peak GPU memory.

Part 2 (`--paper-scale`): FLOPs and memory traffic of a transformer depend on its shape, not on
its weights, so a random model with the shape of Llama-3.1-8B (built from a config in code; no
download) times the paper's workload — 200 people x 5 properties x 11 variants x 101 candidates
x {h, h0, 2 x S(h)} — on a sample, projected to the full audit: hours, tokens/s, and the share
of the GPU's peak bfloat16 FLOP rate reached.

    .venv/bin/python benchmarks/bench_gpu.py                      # on a CUDA machine
    .venv/bin/python benchmarks/bench_gpu.py --device cpu --smoke # the CI smoke run (tiny, float32)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from benchmarks.bench_nll import build_workload  # noqa: E402
from wikimem_platform.lm.fusion import FUSION_CHOICES, resolve_fusion  # noqa: E402
from wikimem_platform.lm.loading import (  # noqa: E402
    SHIPPED_MODELS,
    LoadedModel,
    load_model,
    resolve_batch_size,
    resolve_device,
)
from wikimem_platform.lm.nll import (  # noqa: E402
    engine_batch_tokens,
    score_sentences,
    score_sentences_naive,
    score_token_ids,
)

# Tolerances of issue 19: engine = naive within these, per dtype (nats per sentence).
TOLERANCE = {"float32": 1e-3, "bfloat16": 1e-2, "nf4": 1e-2}
# The paper's workload (WikiMem): people x properties x variants x candidates x subject forms.
PAPER_WORKLOAD = {"people": 200, "properties": 5, "variants": 11, "candidates": 101, "subject_forms": 4}
# Dense bfloat16 tensor-core peaks (FLOP/s), by device-name substring, for the utilisation share.
PEAK_BF16_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "L4": 121e12}
# Llama-3.1-8B's shape (config.json of meta-llama/Llama-3.1-8B), and a tiny one for smoke runs.
LLAMA_8B = dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                num_key_value_heads=8, vocab_size=128256, max_position_embeddings=131072, rope_theta=500000.0,
                rms_norm_eps=1e-5, tie_word_embeddings=False)
LLAMA_TINY = dict(LLAMA_8B, hidden_size=64, intermediate_size=224, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=2048)
# SmolLM2-135M's shape (its config.json in the model cache): where the GPU waits on the host.
SMOLLM2_135M = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, vocab_size=49152, max_position_embeddings=8192, rope_theta=100000.0,
                    rms_norm_eps=1e-5, tie_word_embeddings=True)
PAPER_SHAPES = {"8b": LLAMA_8B, "135m": SMOLLM2_135M}


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(device: torch.device, function, *args, **kwargs):
    synchronize(device)
    started = time.perf_counter()
    result = function(*args, **kwargs)
    synchronize(device)
    return result, time.perf_counter() - started


def peak_memory_gib(device: torch.device) -> float | None:
    return torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None


def gib(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} GiB"


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def load(model: str, dtype: str, device: str) -> LoadedModel:
    if dtype == "nf4":
        return load_model(model, device=device, load_in_4bit=True, allow_4bit_on_cpu=device == "cpu",
                          batch_size="auto")
    return load_model(model, device=device, dtype=dtype, batch_size="auto")


def bench_shipped(args, device: torch.device) -> list[dict]:
    """Part 1: one row per (model, dtype)."""
    workload = build_workload(args.subjects, args.properties, args.candidates)
    sentences = [s for per_subject in workload for per_property in per_subject for s in per_property]
    rows = []
    for model in args.models:
        reference = None  # the float32 engine's NLLs
        for dtype in ["float32", *[d for d in args.dtypes if d != "float32"]]:
            reset_peak(device)
            lm = load(model, dtype, args.device)
            warm = sentences[:512]  # several rows: a compiled engine compiles for them here
            score_sentences(lm, warm)
            score_sentences_naive(lm, warm)
            engine, engine_s = timed(device, score_sentences, lm, sentences)
            naive, naive_s = timed(device, score_sentences_naive, lm, sentences)
            if dtype == "float32":
                reference = engine
            row = {
                "model": model, "dtype": dtype, "sentences": len(sentences), "batch_size": lm.batch_size,
                "naive_per_s": len(sentences) / naive_s, "engine_per_s": len(sentences) / engine_s,
                "ratio": naive_s / engine_s, "max_delta_vs_naive": float(np.abs(engine - naive).max()),
                "max_delta_vs_float32": float(np.abs(engine - reference).max()),
                "peak_gib": peak_memory_gib(device), "tolerance": TOLERANCE[dtype],
            }
            row["within_tolerance"] = row["max_delta_vs_naive"] <= row["tolerance"]
            rows.append(row)
            print(f"{model:24s} {dtype:9s} batch {row['batch_size']:4d}  naive {row['naive_per_s']:8.1f}/s  "
                  f"engine {row['engine_per_s']:8.1f}/s  ratio {row['ratio']:5.2f}x  "
                  f"max|dNLL| vs naive {row['max_delta_vs_naive']:.2e} "
                  f"({'ok' if row['within_tolerance'] else 'OVER'} {row['tolerance']:.0e})  "
                  f"vs float32 {row['max_delta_vs_float32']:.2e}  peak {gib(row['peak_gib'])}", flush=True)
            del lm
            reset_peak(device)
    return rows


def random_model(shape: dict, dtype: torch.dtype, device: torch.device, load_in_4bit: bool) -> LoadedModel:
    """A randomly initialized Llama of the given shape, on the device, as a LoadedModel, with the
    batch budget `load_model(batch_size="auto")` would give it (64 sentences on CPU; on CUDA sized
    by the free memory once the weights are in place) and its fusion setting ("auto")."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(**shape)
    torch.manual_seed(0)
    with torch.device(device):  # built in place, in its dtype: 16 GB for 8B in bf16, no float32 copy
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa")
    if load_in_4bit:
        model = quantize_nf4(model, dtype)
    model.eval()
    return LoadedModel(model=model, tokenizer=None, name=f"random-llama-{shape['num_hidden_layers']}L",
                       source="random", fingerprint="random", device=device, dtype=dtype, start_token_ids=[],
                       batch_size=resolve_batch_size("auto", device, shape["vocab_size"]),
                       fusion=resolve_fusion("auto", device, load_in_4bit))


def quantize_nf4(model, compute_dtype: torch.dtype):
    """Every linear layer but lm_head as bitsandbytes NF4 with double quantization (what
    `load_model(load_in_4bit=True)` gets from transformers for a checkpoint)."""
    import bitsandbytes as bnb

    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear) and child_name != "lm_head":
                quantized = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                              compute_dtype=compute_dtype, compress_statistics=True, quant_type="nf4",
                                              device=child.weight.device)
                quantized.weight = bnb.nn.Params4bit(child.weight.data.cpu(), requires_grad=False,
                                                     compress_statistics=True, quant_type="nf4").to(child.weight.device)
                setattr(module, child_name, quantized)
    return model


def shape_parameters(shape: dict) -> int:
    """Llama's parameter count from its shape (NF4 packs the weights, so count them from the config)."""
    hidden, heads, kv_heads = shape["hidden_size"], shape["num_attention_heads"], shape["num_key_value_heads"]
    head_dim = hidden // heads
    attention = hidden * head_dim * (heads + 2 * kv_heads) + heads * head_dim * hidden
    mlp = 3 * hidden * shape["intermediate_size"]
    per_layer = attention + mlp + 2 * hidden
    embeddings = shape["vocab_size"] * hidden * (1 if shape["tie_word_embeddings"] else 2)
    return shape["num_hidden_layers"] * per_layer + embeddings + hidden


def paper_workload_ids(sample_people: int, vocab_size: int, rng: np.random.Generator) -> list[list[int]]:
    """Token ids with the paper's sharing structure for `sample_people` people: per person,
    property and variant a shared template prefix, then subject form, then candidate value."""
    ids = []
    w = PAPER_WORKLOAD
    for _ in range(sample_people):
        subject_forms = [list(rng.integers(10, vocab_size, rng.integers(2, 6))) for _ in range(w["subject_forms"])]
        for _ in range(w["properties"]):
            candidates = [list(rng.integers(10, vocab_size, rng.integers(1, 5))) for _ in range(w["candidates"])]
            for _ in range(w["variants"]):
                head, tail = (list(rng.integers(10, vocab_size, rng.integers(2, 8))) for _ in range(2))
                for subject in subject_forms:
                    for value in candidates:
                        ids.append([1, *head, *subject, *tail, *value])
    return ids


def load_engine(path: str):
    """Another version of the engine module (e.g. main's `wikimem_platform/lm/nll.py` before a
    change, copied aside), to time against in the same run."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("engine_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def with_segments(sequences: int):
    """The engine with its sorted sentences cut into segments of this many instead of
    `nll.SEGMENT_SEQUENCES`: how much laying out the next segment during the current one's
    forwards buys, against sharing lost at segment edges."""
    from wikimem_platform.lm import nll

    def run(lm: LoadedModel, ids: list[list[int]], batch_tokens: int) -> np.ndarray:
        saved = nll.SEGMENT_SEQUENCES
        nll.SEGMENT_SEQUENCES = sequences
        try:
            return score_token_ids(lm, ids, batch_tokens=batch_tokens)
        finally:
            nll.SEGMENT_SEQUENCES = saved

    return run


def with_fusion(fusion: str):
    """The engine with another fusion setting than the model's (lm/fusion.py; "none": eager) for
    this run only, on the same weights."""

    def run(lm: LoadedModel, ids: list[list[int]], batch_tokens: int) -> np.ndarray:
        saved = lm.fusion
        lm.fusion = resolve_fusion(fusion, lm.device, False)
        try:
            return score_token_ids(lm, ids, batch_tokens=batch_tokens)
        finally:
            lm.fusion = saved

    return run


def bench_paper_scale(args, device: torch.device) -> list[dict]:
    """Part 2: random models of the chosen shapes on a sample of the paper's workload, projected
    to all of it. With --baseline-engine, each pass of the baseline engine (at its default budget)
    is followed by one of this engine at the baseline's budget and one at its own default, twice
    (a first pass pays any per-shape set-up, a second shows the steady state)."""
    shapes = {"tiny": LLAMA_TINY} if args.smoke else {name: PAPER_SHAPES[name] for name in args.paper_shapes}
    total = int(np.prod(list(PAPER_WORKLOAD.values())))
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    peak = next((flops for key, flops in PEAK_BF16_FLOPS.items() if key in name), None)
    baseline = load_engine(args.baseline_engine) if args.baseline_engine else None
    rows = []
    for shape_name, shape in shapes.items():
        for dtype in args.dtypes:
            if dtype == "float32" and device.type == "cuda" and not args.paper_float32:
                continue  # the paper-scale run is about bf16 and NF4; float32 is its re-scoring's cost
            torch_dtype = torch.float32 if dtype == "float32" else torch.bfloat16
            reset_peak(device)
            lm = random_model(shape, torch_dtype, device, load_in_4bit=dtype == "nf4")
            parameters = shape_parameters(shape)
            ids = paper_workload_ids(args.paper_people, shape["vocab_size"], np.random.default_rng(0))
            ids = ids[: args.paper_sample] if args.paper_sample else ids
            tokens = len({tuple(s[:i]) for s in ids for i in range(1, len(s) + 1)})  # prefix-tree nodes
            # 2 FLOPs per weight (input embedding excluded) per distinct prefix-tree node, through
            # the body and lm_head: a lower bound (attention's own FLOPs are small at these lengths).
            flops = 2 * (parameters - shape["vocab_size"] * shape["hidden_size"]) * tokens
            default_budget = engine_batch_tokens(lm)
            runs = [("engine", score_token_ids, default_budget),
                    *[(f"engine, segments of {n:,}", with_segments(n), default_budget) for n in args.segment_sequences],
                    *[(f"engine, fusion {fusion}", with_fusion(fusion), default_budget) for fusion in args.fusion]]
            if baseline is not None:
                old_budget = lm.batch_size * baseline.TOKENS_PER_SENTENCE
                runs = [("baseline", baseline.score_token_ids, old_budget),
                        ("engine@baseline budget", score_token_ids, old_budget), *runs]
            for label, function, budget in runs:
                started = time.perf_counter()
                function(lm, ids[:64], batch_tokens=budget)  # a compiled engine compiles here (one row)
                function(lm, ids[:2048], batch_tokens=budget)  # and for several rows (dim 0 > 1)
                print(f"{label}: warm-up {time.perf_counter() - started:.1f} s", flush=True)
            reference = None
            for repeat in range(args.passes):
                for label, function, budget in runs:
                    nll, seconds = timed(device, function, lm, ids, batch_tokens=budget)
                    reference = nll if reference is None else reference
                    row = {"shape": shape_name, "dtype": dtype, "engine": label, "pass": repeat + 1,
                           "parameters": parameters, "batch_size": lm.batch_size, "batch_tokens": budget,
                           "sample_sentences": len(ids), "seconds": seconds, "sentences_per_s": len(ids) / seconds,
                           "tree_tokens_per_s": tokens / seconds,
                           "projected_hours": total / (len(ids) / seconds) / 3600, "peak_gib": peak_memory_gib(device),
                           "flops_share": (flops / seconds / peak) if peak else None,
                           "max_delta_vs_first": float(np.abs(nll - reference).max())}
                    rows.append(row)
                    print(f"paper-scale {lm.name} ({parameters / 1e9:.2f} B parameters) {dtype:9s} {label} pass {repeat + 1}: "
                          f"{row['sentences_per_s']:,.0f} sentences/s, {row['tree_tokens_per_s']:,.0f} tree tokens/s on "
                          f"{len(ids):,} sentences ({budget:,} tree tokens a forward); full audit ({total:,} sentences): {row['projected_hours']:.2f} h"
                          + (f"; {100 * row['flops_share']:.1f}% of {name}'s peak bf16 FLOP rate" if row["flops_share"] else "")
                          + (f"; peak {row['peak_gib']:.1f} GiB" if row["peak_gib"] is not None else "")
                          + (f"; max|dNLL| vs the first run {row['max_delta_vs_first']:.2e}" if len(runs) > 1 else ""),
                          flush=True)
            if baseline is not None:
                best = {label: max(r["sentences_per_s"] for r in rows[-len(runs) * args.passes:] if r["engine"] == label)
                        for label, _, _ in runs}
                first = {r["engine"]: r["sentences_per_s"] for r in rows[-len(runs) * args.passes:] if r["pass"] == 1}
                fastest = max((label for label in best if label.startswith("engine")), key=best.get)
                print(f"fastest {shape_name} {dtype}: {fastest} at {best[fastest]:,.0f} sentences/s, "
                      f"{best[fastest] / best['baseline']:.2f}x the baseline's best", flush=True)
                print(f"ratio {shape_name} {dtype}: engine / baseline {first['engine'] / first['baseline']:.2f}x on the "
                      f"first pass, {best['engine'] / best['baseline']:.2f}x best of {args.passes}; at the baseline's "
                      f"budget {best['engine@baseline budget'] / best['baseline']:.2f}x", flush=True)
            del lm
            reset_peak(device)
    return rows


def main(argv: list[str] | None = None) -> tuple[list[dict], list[dict]]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda | cuda:N | cpu")
    parser.add_argument("--models", nargs="*", default=list(SHIPPED_MODELS),
                        help="models of part 1 (none: part 2 only)")
    parser.add_argument("--dtypes", nargs="+", default=None,
                        help="float32 bfloat16 nf4 (default: all three on CUDA, float32 on CPU)")
    parser.add_argument("--subjects", type=int, default=4)
    parser.add_argument("--properties", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=101)
    parser.add_argument("--paper-scale", action="store_true", help="also time the random Llama-3.1-8B model")
    parser.add_argument("--paper-float32", action="store_true",
                        help="also time the 8B model in float32 (what re-scoring bf16/NF4 near-ties costs per sentence)")
    parser.add_argument("--paper-shapes", nargs="+", default=["8b"], choices=sorted(PAPER_SHAPES),
                        help="random models to time: Llama-3.1-8B's shape, SmolLM2-135M's")
    parser.add_argument("--baseline-engine", default=None,
                        help="path of another version of wikimem_platform/lm/nll.py to time in the same run")
    parser.add_argument("--segment-sequences", nargs="*", type=int, default=[],
                        help="also time the engine with its sentences cut into segments of these sizes")
    parser.add_argument("--fusion", nargs="*", default=[], choices=[c for c in FUSION_CHOICES if c != "auto"],
                        help="also time the engine with these fusion settings (lm/fusion.py; none: eager)")
    parser.add_argument("--passes", type=int, default=1, help="timed passes over the paper-scale sample")
    parser.add_argument("--paper-people", type=int, default=2, help="people in the timed paper-scale sample")
    parser.add_argument("--paper-sample", type=int, default=None, help="at most this many of their sentences")
    parser.add_argument("--smoke", action="store_true",
                        help="a seconds-long run: one subject, one property, 5 candidates, a tiny random Llama")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    if args.dtypes is None:
        args.dtypes = ["float32", "bfloat16", "nf4"] if device.type == "cuda" else ["float32"]
    if args.smoke:
        args.subjects, args.properties, args.candidates, args.paper_people, args.paper_sample = 1, 1, 5, 1, 2000
    print(f"device: {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}; torch {torch.__version__}; "
          f"dtypes {args.dtypes}", flush=True)
    shipped = bench_shipped(args, device)
    paper = bench_paper_scale(args, device) if args.paper_scale else []
    return shipped, paper


if __name__ == "__main__":
    main()
