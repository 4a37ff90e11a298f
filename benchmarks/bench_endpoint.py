"""Sentences/s through a vLLM server (prompt log-probabilities of token-id prompts) vs the
prefix-tree engine, same model, same workload, same cores; and how far their NLLs differ.
With --top-k K (default 20; 0 skips it) the same server is also read at top-logprobs access:
each sentence's continuation after the text before its value, token by token from the top K
(the workload's wordings that name the person first), with the prompts it took, how many were
censored, and how far the ones read in full are from the engine's NLL(sentence) - NLL(prefix).

Workload: `bench_nll.py`'s (subjects x properties x 11 templates x candidates x {h, h0, 2 similar
names}); default 1 subject, 1 property, 101 candidates = 4,444 sentences. The server recomputes
every shared prefix for every sentence (vLLM's prefix cache is skipped for prompt
log-probabilities); the engine runs each distinct prefix once.

    .venv/bin/python benchmarks/bench_endpoint.py                  # starts vLLM from .vllm-venv
    .venv/bin/python benchmarks/bench_endpoint.py --url http://127.0.0.1:8000 --served-model smollm2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench_nll import build_workload, fill, GENERIC_SUBJECT, PROPERTIES, similar_names, SUBJECTS  # noqa: E402
from wikimem_platform.lm.endpoint import check_probe, EndpointConfig, EndpointModel  # noqa: E402
from wikimem_platform.lm.loading import load_model  # noqa: E402
from wikimem_platform.lm.nll import score_sentences  # noqa: E402
from wikimem_platform.lm.vllm_server import start_vllm  # noqa: E402


def group_cpu_seconds(pgid: int) -> float:
    """CPU seconds (user + system) used so far by the live processes of a process group (the
    server, its engine core and workers): the fair measure when other jobs share the cores."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state, ppid, pgrp, ..., utime (12), stime (13)
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def continuation_workload(n_subjects: int, n_properties: int, n_candidates: int) -> dict[str, str]:
    """bench_nll's workload sentences whose wording names the person before the value -> the text
    before the value (what a top-logprobs continuation starts after)."""
    mark, out = "\x00", {}
    for subject in SUBJECTS[:n_subjects]:
        for values_text, templates in list(PROPERTIES.values())[:n_properties]:
            values = [v.strip() for v in values_text.replace("\n", " ").split(",")][:n_candidates]
            for template in templates:
                first_value = min(i for i in (template.find("{value}"), template.find("{Value}")) if i >= 0)
                if template.find("{subject}") > first_value or "{subject}" in template[first_value:]:
                    continue
                for variant in [subject, GENERIC_SUBJECT, *similar_names(subject)]:
                    head = fill(template, variant, mark).split(mark, 1)[0].rstrip()
                    out.update({fill(template, variant, value): head for value in values})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="shipped short name or local directory")
    parser.add_argument("--url", help="a running server's base URL (default: start vLLM from .vllm-venv)")
    parser.add_argument("--served-model", default="model", help="the server's model id (with --url)")
    parser.add_argument("--subjects", type=int, default=1)
    parser.add_argument("--properties", type=int, default=1)
    parser.add_argument("--candidates", type=int, default=101)
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight")
    parser.add_argument("--prompts-per-request", type=int, default=1)
    parser.add_argument("--top-k", type=int, default=20, help="also read the top-logprobs access with this k (0: skip)")
    args = parser.parse_args()

    lm = load_model(args.model)
    sentences = [s for subject in build_workload(args.subjects, args.properties, args.candidates)
                 for per_property in subject for s in per_property]
    print(f"model {lm.name} ({lm.details['load_dir']}), {len(sentences):,} sentences "
          f"({len(set(sentences)):,} distinct), torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs")

    score_sentences(lm, sentences[:64])  # warm-up on other sentences than the measured ones
    started, cpu_started = time.perf_counter(), time.process_time()
    engine_nll = score_sentences(lm, sentences)
    engine_alone_seconds = time.perf_counter() - started
    engine_cpu = time.process_time() - cpu_started
    print(f"engine alone (no server running): {engine_alone_seconds:.1f} s, load average {os.getloadavg()[0]:.1f}")

    server = None
    if args.url is None:
        log = Path(tempfile.mkdtemp(prefix="bench_endpoint_")) / "vllm.log"
        server = start_vllm(lm.details["load_dir"], log, served_model="model")
        url, served = server.url, server.served_model
        print(f"vLLM started on {url} in {server.startup_seconds:.0f} s (log {log})")
    else:
        url, served = args.url, args.served_model
    try:
        config = EndpointConfig(url=url, served_model=served, tokenizer=lm.details["load_dir"],
                                concurrency=args.concurrency, prompts_per_request=args.prompts_per_request,
                                timeout_seconds=600)
        endpoint = EndpointModel(config, tokenizer=lm.tokenizer)
        probe = check_probe(endpoint.probe())
        print(f"probe: {probe.sentence!r} NLL {probe.nll_token_ids:.4f} nats (token ids), {probe.nll_text:.4f} (text)")

        endpoint.score_sentences(sentences[-64:])  # warm-up

        server_cpu_started = group_cpu_seconds(server.process.pid) if server else float("nan")
        started, cpu_started = time.perf_counter(), time.process_time()
        endpoint_nll = endpoint.score_sentences(sentences)
        endpoint_seconds = time.perf_counter() - started
        client_cpu = time.process_time() - cpu_started
        server_cpu = (group_cpu_seconds(server.process.pid) if server else float("nan")) - server_cpu_started
        started = time.perf_counter()
        score_sentences(lm, sentences)  # again, the server idle beside it (an idle vLLM still takes CPU)
        engine_seconds = time.perf_counter() - started
        top = None
        if args.top_k:
            prefixes = continuation_workload(args.subjects, args.properties, args.candidates)
            top_model = EndpointModel(replace(config, access="top-logprobs", top_k=args.top_k), tokenizer=lm.tokenizer)
            check_probe(top_model.probe())
            texts = list(prefixes)
            started = time.perf_counter()
            cache: dict[str, float] = {}
            top_nll = top_model.score_continuations(texts, prefixes, cache=cache)
            top_seconds = time.perf_counter() - started
            censored = top_model.censored(texts, cache)
            whole = dict(zip(sentences, engine_nll))
            reference = (np.array([whole[t] for t in texts]) - score_sentences(lm, [prefixes[t] for t in texts]))
            top = (len(texts), top_seconds, top_model.censoring, censored,
                   np.abs(top_nll - reference)[~censored], bool(np.all(top_nll[censored] <= reference[censored] + 1e-3)))
    finally:
        if server is not None:
            server.stop()

    gap = np.abs(engine_nll - endpoint_nll)
    engine_rate, endpoint_rate = len(sentences) / engine_seconds, len(sentences) / endpoint_seconds
    alone_rate = len(sentences) / engine_alone_seconds
    usage = endpoint.client.usage
    print(f"load average at the end {os.getloadavg()[0]:.1f} (other processes on these cores move every figure)")
    print(f"engine (prefix tree), no server: {engine_alone_seconds:7.1f} s  {alone_rate:7.1f} sentences/s")
    print(f"engine (prefix tree), server up: {engine_seconds:7.1f} s  {engine_rate:7.1f} sentences/s")
    print(f"vLLM endpoint:                   {endpoint_seconds:7.1f} s  {endpoint_rate:7.1f} sentences/s  "
          f"({args.concurrency} requests in flight, {args.prompts_per_request} prompt(s) each; "
          f"{usage.requests:,} requests, {usage.prompt_tokens:,} prompt tokens, {usage.retries} retries)")
    print(f"CPU seconds: engine {engine_cpu:.1f} ({len(sentences) / engine_cpu:.1f} sentences per CPU-second); "
          f"endpoint {server_cpu:.1f} in the server + {client_cpu:.1f} in this client "
          f"({len(sentences) / (server_cpu + client_cpu):.1f} sentences per CPU-second)")
    print(f"|endpoint - engine| NLL: max {gap.max():.2e} nats, mean {gap.mean():.2e}")
    print(f"ratio: the engine scores {alone_rate / endpoint_rate:.1f}x the sentences/s of the vLLM endpoint "
          f"({engine_rate / endpoint_rate:.1f}x with the idle server beside it); per CPU-second "
          f"{(server_cpu + client_cpu) / engine_cpu:.1f}x")
    if top is not None:
        n, seconds, counts, censored, gaps, bounded = top
        print(f"top-{args.top_k} access: {n:,} continuations in {seconds:.1f} s ({n / seconds:.1f} sentences/s; "
              f"{counts.nodes_asked:,} prefixes asked, {counts.nodes_asked / n:.2f} per sentence), "
              f"{int(censored.sum()):,} censored ({100 * censored.mean():.1f}%)")
        print(f"  read in full: |top-{args.top_k} - engine continuation| max {gaps.max():.2e} nats over {len(gaps):,}; "
              f"censored ones a lower bound of the engine's: {bounded}")
        print(f"  ratio: prompt-logprobs {endpoint_rate / (n / seconds):.2f}x the sentences/s of top-{args.top_k}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
