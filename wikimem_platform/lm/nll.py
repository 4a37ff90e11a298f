"""Exact whole-sentence NLL for many sentences that share prefixes.

NLL(s) = -sum_t log p(w_t | w_<t) over every token after the start token, in nats.

The engine runs every distinct token prefix once. The distinct sentences' full token ids (never
pieces tokenized separately: BPE merges across a value boundary) are sorted and laid out as a
prefix tree; the tree is cut into chunks of whole root-to-leaf paths, and each chunk is run as one
packed row whose attention mask lets a token see exactly its ancestors, with position ids equal to
its depth. That is the same computation as running each sentence alone (causal attention sees
only the sentence's own earlier tokens), so the result is exact, and a shared prefix such as
"<bos> Albert Einstein's occupation is" is computed once for all ~100 candidate values, while a
value-first template shares "<bos> Physicist is the occupation of" across subjects. The output
projection (lm_head, 262k rows for Gemma 3) is applied only to tree nodes that have children,
i.e. positions whose next token is scored, and log-probabilities are taken in float32; leaves
(each sentence's last token) are scored from their parent and never enter the model at all.
Identical sentences are scored once, and `cache` (sentence -> NLL) carries results across calls,
so the generic-subject (h0) sentences are computed once for all subjects.

The host side is numpy throughout (no per-node Python loop): the tree is laid out from a padded
array of the sorted sentences, and the attention mask is built on the device from each row's
parent columns. The sorted sentences are cut into segments; a thread lays out segment k+1 and
packs each forward's inputs (one pinned buffer, one copy) while the main thread queues the
forwards, and log-probabilities stay on the device until the end, so a GPU does not wait on the
host between forwards. On CUDA, row widths are rounded up to a multiple of 64 and attention runs
on the memory-efficient SDPA kernel: few shapes, and no per-shape plan building (cuDNN's kernel
made a first pass 2-4x slower than the second).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from dataclasses import dataclass
from queue import Full, Queue
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from wikimem_platform.lm.batching import padded_batches
from wikimem_platform.lm.cache_rule import through_cache
from wikimem_platform.lm.fusion import fused

if TYPE_CHECKING:  # LoadedModel imports this engine where it scores (no cycle at run time)
    import torch

    from wikimem_platform.lm.loading import LoadedModel

DEFAULT_CHUNK_TOKENS = 256  # tree nodes per packed row: attention cost grows with its square
TOKENS_PER_SENTENCE = 32  # converts LoadedModel.batch_size (sentences) into tokens per forward
LOGIT_ROWS = 128  # lm_head rows at a time on CPU: 128 x 262k float32 = 134 MB for Gemma 3
GPU_LOGIT_ELEMENTS = 2**27  # float32 logits at a time on CUDA (512 MB)
GPU_WIDTH_STEP = 64  # on CUDA, row widths are rounded up to a multiple of this: few shapes
MAX_GPU_BATCH_TOKENS = 65_536  # tree nodes per forward on CUDA at most

Progress = Callable[[int, int], None]


def score_sentences(
    lm: LoadedModel,
    sentences: Sequence[str],
    *,
    cache: dict[str, float] | None = None,
    batch_tokens: int | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    progress: Progress | None = None,
) -> np.ndarray:
    """Total NLL (nats, float64) of each sentence, exact, sharing work between sentences.

    cache: sentence -> NLL, read first and filled in (keep it across calls for the same model).
    batch_tokens: tree nodes per forward (default lm.batch_size * 32: 2048 on CPU);
    chunk_tokens: tree nodes per packed row. progress(done, total) counts distinct
    sentences not found in the cache.
    """
    return through_cache(sentences, cache, lambda todo: score_token_ids(
        lm, lm.encode(todo), batch_tokens=batch_tokens, chunk_tokens=chunk_tokens, progress=progress))


def score_sentences_naive(
    lm: LoadedModel,
    sentences: Sequence[str],
    batch_size: int | None = None,
    progress: Progress | None = None,
) -> np.ndarray:
    """Reference: every sentence run whole (no dedup), batches sorted by length, right padding,
    the model's own logits at every position."""
    sentences = list(sentences)
    return _score_naive_ids(lm, lm.encode(sentences), batch_size or lm.batch_size, progress)


def score_token_ids(
    lm: LoadedModel,
    token_ids: Sequence[Sequence[int]],
    *,
    batch_tokens: int | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    progress: Progress | None = None,
) -> np.ndarray:
    """The engine on full token ids (start token included); the first token is never scored.

    batch_tokens: tree nodes per forward (default `engine_batch_tokens(lm)`)."""
    sequences = [tuple(map(int, ids)) for ids in token_ids]
    index_of: dict[tuple[int, ...], int] = {}
    inverse = np.array([index_of.setdefault(seq, len(index_of)) for seq in sequences], dtype=np.int64)
    distinct = list(index_of)
    nll = np.zeros(len(distinct), dtype=np.float64)

    # Sliding-window layers would need a windowed tree mask; sentences that long go the naive way.
    window = _sliding_window(lm)
    too_long = [i for i, seq in enumerate(distinct) if window is not None and len(seq) > window]
    if too_long:
        nll[too_long] = _score_naive_ids(lm, [list(distinct[i]) for i in too_long], lm.batch_size, None)
    long_set = set(too_long)
    tree_ids = [i for i in range(len(distinct)) if i not in long_set and len(distinct[i]) > 1]

    if tree_ids:
        tree_ids.sort(key=distinct.__getitem__)  # sorted: neighbours share prefixes
        budget = batch_tokens or engine_batch_tokens(lm)
        segments = [tree_ids[lo:lo + SEGMENT_SEQUENCES] for lo in range(0, len(tree_ids), SEGMENT_SEQUENCES)]
        already = len(distinct) - len(tree_ids)
        scored = _score_segments(
            lm, [[distinct[i] for i in segment] for segment in segments], chunk_tokens, budget,
            None if progress is None else (lambda done: progress(already + done, len(distinct))),
        )
        for segment, (forest, node_logprob) in zip(segments, scored):
            nll[segment] = -_path_sums(forest, node_logprob)[forest.end_nodes]
    return nll[inverse]


def engine_batch_tokens(lm: LoadedModel) -> int:
    """Tree nodes per forward: lm.batch_size x 32 (2,048 on CPU). On CUDA at least that, and as
    many as a quarter of the free memory holds in activations (up to MAX_GPU_BATCH_TOKENS): only
    LOGIT_ROWS-sized slices of logits ever exist, so the body's activations are what bounds a
    forward, and big forwards keep a large GPU busy."""
    budget = lm.batch_size * TOKENS_PER_SENTENCE
    if lm.device.type != "cuda":
        return budget
    import torch

    config = lm.model.config
    hidden = int(getattr(config, "hidden_size", 4096))
    intermediate = int(getattr(config, "intermediate_size", 4 * hidden))
    element = torch.finfo(_activation_dtype(lm)).bits // 8
    # a layer's live activations per token (residual, norms, q/k/v/o, gate/up/act) and its mask row
    per_token = (8 * hidden + 3 * intermediate) * element + 3 * DEFAULT_CHUNK_TOKENS
    free_bytes, _ = torch.cuda.mem_get_info(lm.device)
    return int(max(budget, min(MAX_GPU_BATCH_TOKENS, free_bytes // 4 // per_token)))


@dataclass
class _Forest:
    """The distinct sequences' prefix tree, cut into chunks of whole root-to-leaf paths; each
    chunk is one packed row of a forward. Node arrays are global: a chunk's nodes are contiguous,
    parents before children, in the order of the sorted sequences."""

    tokens: np.ndarray  # [nodes] token id
    parents: np.ndarray  # [nodes] global id of the parent node, -1 for a chunk's root
    depths: np.ndarray  # [nodes] position id: distance from the root
    chunk_starts: np.ndarray  # [chunks + 1] first node of each chunk, then the node count
    end_nodes: np.ndarray  # [sequences] node of each input sequence's last token
    inner: np.ndarray  # [nodes] has a child: only these go through the model
    inner_col: np.ndarray  # [nodes] column in its chunk's row (inner nodes only; -1 for leaves)
    n_inner: np.ndarray  # [chunks] inner nodes per chunk (its row's width)
    n_ends: np.ndarray  # [chunks] sequences ending in each chunk (for progress)

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_starts) - 1


def _build_forest(sequences: list[tuple[int, ...]], chunk_tokens: int) -> _Forest:
    """Lay the sequences (distinct, each of 2+ tokens) out as a prefix tree cut into chunks of at
    most chunk_tokens inner nodes (a longer sentence gets a chunk of its own), with numpy.

    In sorted order a sequence shares with any earlier one at most what it shares with its
    predecessor (lcp), so it adds nodes for its depths lcp..len-1; the node at depth d on its
    path is the one added by the last sequence up to it whose lcp is <= d. A chunk restarts the
    sharing (its first sequence adds its whole path)."""
    n = len(sequences)
    order = np.array(sorted(range(n), key=sequences.__getitem__), dtype=np.int64)
    ordered = [sequences[k] for k in order]
    lengths = np.fromiter(map(len, ordered), dtype=np.int64, count=n)
    padded = _padded(ordered, lengths)

    lcp = np.zeros(n, dtype=np.int64)
    same = padded[1:] == padded[:-1]  # distinct sequences differ by the padding at the latest
    lcp[1:] = np.argmin(same, axis=1)

    # New inner nodes of each sequence: all it adds but its last, plus its predecessor's end
    # node when it extends it. A chunk's first sequence costs its whole path.
    previous_length = np.concatenate([[0], lengths[:-1]])
    added = np.cumsum(lengths - lcp - 1 + ((lcp > 0) & (lcp == previous_length)))
    chunk_seq_starts = []
    start = 0
    while start < n:
        chunk_seq_starts.append(start)
        limit = chunk_tokens - (lengths[start] - 1) + added[start]
        start = max(int(np.searchsorted(added, limit, side="right")) - 1, start) + 1
    lcp[chunk_seq_starts] = 0
    new_nodes = lengths - lcp
    first_node = np.concatenate([[0], np.cumsum(new_nodes)])

    width = padded.shape[1]
    depth = np.arange(width)
    created = (depth >= lcp[:, None]) & (depth < lengths[:, None])
    node_id = np.full((n, width), -1, dtype=np.int64)
    node_id[created] = np.arange(first_node[-1])  # row-major: parents first
    owner = np.maximum.accumulate(np.where(created, np.arange(n)[:, None], -1), axis=0)
    on_path = np.where(depth < lengths[:, None], node_id[np.maximum(owner, 0), depth], -1)
    row, col = np.nonzero(created)
    tokens = padded[row, col].astype(np.int64)
    depths = col
    parents = np.where(col > 0, on_path[row, np.maximum(col - 1, 0)], -1)
    end_sorted = on_path[np.arange(n), lengths - 1]

    chunk_starts = np.append(first_node[chunk_seq_starts], len(tokens))
    n_nodes, n_chunks = len(tokens), len(chunk_seq_starts)
    inner = np.zeros(n_nodes, dtype=bool)
    inner[parents[parents >= 0]] = True
    chunk_of_node = np.repeat(np.arange(n_chunks), np.diff(chunk_starts))
    inner_before = np.cumsum(inner) - inner  # inner nodes before each node
    inner_col = np.where(inner, inner_before - inner_before[chunk_starts[:-1]][chunk_of_node], -1)
    end_nodes = np.empty(n, dtype=np.int64)
    end_nodes[order] = end_sorted
    return _Forest(
        tokens=tokens, parents=parents, depths=depths, chunk_starts=chunk_starts, end_nodes=end_nodes,
        inner=inner, inner_col=inner_col, n_inner=np.add.reduceat(inner.astype(np.int64), chunk_starts[:-1]),
        n_ends=np.bincount(chunk_of_node[end_sorted], minlength=n_chunks),
    )


def _padded(sequences: list[tuple[int, ...]], lengths: np.ndarray) -> np.ndarray:
    """The sequences as rows of one int32 array (token ids < 2**31), -1 after each one's end."""
    width = int(lengths.max()) if len(lengths) else 0
    block = np.full((len(sequences), width), -1, dtype=np.int32)
    block[np.arange(width) < lengths[:, None]] = np.fromiter(
        itertools.chain.from_iterable(sequences), dtype=np.int32, count=int(lengths.sum())
    )
    return block


def _batches(forest: _Forest, budget_tokens: int, width_step: int) -> list[np.ndarray]:
    """Chunks of similar width together (widest first), about budget_tokens row positions per
    forward; widths rounded up to width_step so that forwards share few shapes."""
    ordered = np.argsort(-forest.n_inner, kind="stable")
    batches, current, width = [], [], 0
    for chunk in ordered.tolist():
        if current and width * (len(current) + 1) > budget_tokens:
            batches.append(np.array(current))
            current = []
        if not current:
            width = _bucket(int(forest.n_inner[chunk]), width_step)
        current.append(chunk)
    if current:
        batches.append(np.array(current))
    return batches


def _bucket(width: int, step: int) -> int:
    return -(-width // step) * step


@dataclass
class _Packed:
    """One forward's inputs, laid out on the host (a prefetch thread does this during the
    previous forward): everything index-like in one int64 buffer, copied to the device at once."""

    buffer: torch.Tensor  # int64: input ids, position ids, parent columns [rows x width] each, then
    # the inner nodes' flat positions, each scored node's parent (index into those), token, node id
    rows: int
    width: int
    n_inner: int
    n_scored: int
    depth: int  # the deepest inner node: ancestor steps in the mask
    logit_rows: int
    block_bounds: np.ndarray  # scored nodes whose parent falls in each LOGIT block of inner nodes
    sequences_done: int


def _pack(forest: _Forest, chunks: np.ndarray, width_step: int, logit_rows: int, pin: bool) -> _Packed:
    import torch

    starts, sizes = forest.chunk_starts[chunks], np.diff(forest.chunk_starts)[chunks]
    nodes = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(sizes.sum())
    row_of = np.repeat(np.arange(len(chunks)), sizes)
    rows, width = len(chunks), _bucket(int(forest.n_inner[chunks].max()), width_step)

    is_inner = forest.inner[nodes]
    inner_nodes, inner_rows = nodes[is_inner], row_of[is_inner]
    cols = forest.inner_col[inner_nodes]
    grid = np.zeros((3, rows, width), dtype=np.int64)
    grid[2] = -1  # parent columns: -1 for roots and padding
    grid[0, inner_rows, cols] = forest.tokens[inner_nodes]
    grid[1, inner_rows, cols] = forest.depths[inner_nodes]
    inner_parents = forest.parents[inner_nodes]
    grid[2, inner_rows, cols] = np.where(inner_parents >= 0, forest.inner_col[np.maximum(inner_parents, 0)], -1)
    inner_flat = inner_rows * width + cols  # ascending: rows in order, columns in node order

    # Every non-root node is scored from its parent's hidden state; group them by parent.
    has_parent = forest.parents[nodes] >= 0
    scored, scored_rows = nodes[has_parent], row_of[has_parent]
    parent_index = np.searchsorted(inner_flat, scored_rows * width + forest.inner_col[forest.parents[scored]])
    by_parent = np.argsort(parent_index, kind="stable")
    scored, parent_index = scored[by_parent], parent_index[by_parent]
    block_bounds = np.searchsorted(parent_index, np.arange(0, len(inner_nodes) + logit_rows, logit_rows))

    buffer = torch.from_numpy(np.concatenate(
        [grid.ravel(), inner_flat, parent_index, forest.tokens[scored], scored]
    ))
    return _Packed(
        buffer=buffer.pin_memory() if pin else buffer, rows=rows, width=width, n_inner=len(inner_nodes),
        n_scored=len(scored), depth=int(forest.depths[inner_nodes].max()), logit_rows=logit_rows,
        block_bounds=block_bounds,
        sequences_done=int(forest.n_ends[chunks].sum()),
    )


def _score_segments(
    lm: LoadedModel, segments: list[list[tuple[int, ...]]], chunk_tokens: int, budget_tokens: int,
    progress: Callable[[int], None] | None, width_step: int | None = None, logit_rows: int | None = None,
) -> list[tuple[_Forest, np.ndarray]]:
    """Each segment's forest and log p(node | ancestors) of its every node (0 for roots, float64).

    A thread builds the forests and packs the forwards' inputs while the main thread runs the
    forwards, a few batches ahead; forwards are queued without waiting for results (the
    log-probabilities stay on the device until the end). On a GPU the host thus lays out segment
    k+1 while segment k runs. width_step and logit_rows default to the device's (tests set them
    to check the GPU layout on CPU)."""
    import torch

    device, cuda = lm.device, lm.device.type == "cuda"
    width_step = width_step or (GPU_WIDTH_STEP if cuda else 1)
    logit_rows = logit_rows or _logit_rows(lm)
    queue: Queue = Queue(maxsize=PREFETCH)
    stop = threading.Event()

    def produce() -> None:
        try:
            for sequences in segments:
                forest = _build_forest(sequences, chunk_tokens)
                _put(queue, stop, forest)
                for batch in _batches(forest, budget_tokens, width_step):
                    _put(queue, stop, _pack(forest, batch, width_step, logit_rows, cuda))
            _put(queue, stop, None)
        except BaseException as error:  # handed to the main thread, which raises it
            _put(queue, stop, error)

    results: list[tuple[_Forest, torch.Tensor]] = []
    done = 0
    producer = threading.Thread(target=produce, name="nll-packer", daemon=True)
    producer.start()
    try:
        with torch.inference_mode(), fused(lm.model, lm.fusion):
            while (item := queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, _Forest):
                    results.append((item, torch.zeros(len(item.tokens), dtype=torch.float32, device=device)))
                    continue
                _run_packed(lm, item, results[-1][1])
                done += item.sequences_done
                if progress is not None:
                    progress(done)
    finally:
        stop.set()
        producer.join()
    return [(forest, logprob.cpu().numpy().astype(np.float64)) for forest, logprob in results]


def _put(queue: Queue, stop: threading.Event, item) -> None:
    """Queue.put that gives up once the consumer has stopped (an error in a forward)."""
    while not stop.is_set():
        try:
            queue.put(item, timeout=0.1)
            return
        except Full:
            continue


PREFETCH = 3  # forests and packed batches laid out ahead of the forward that runs
# Sorted sentences per forest. The first segment's layout is the GPU's only idle wait; smaller
# segments lose a little sharing at their edges. On an H200 (benchmarks/results/bench_gpu_h200_engine.txt)
# 8,192 was as fast as or faster than 24,576 and one budget's worth (65,536).
SEGMENT_SEQUENCES = 8_192


def _run_packed(lm: LoadedModel, packed: _Packed, node_logprob: torch.Tensor) -> None:
    """One forward over the packed rows; writes each scored node's log-probability into
    node_logprob (on the device, no synchronization).

    Leaves (mostly each sentence's last token) are scored from their parent's hidden state and
    never enter the model themselves: about a third of the tree."""
    import torch

    model, device = lm.model, lm.device
    on_device = packed.buffer.to(device, non_blocking=True)
    grid_size = packed.rows * packed.width
    grid = on_device[: 3 * grid_size].view(3, packed.rows, packed.width)
    inner_flat, parent_index, scored_tokens, scored_nodes = torch.split(
        on_device[3 * grid_size:], [packed.n_inner, packed.n_scored, packed.n_scored, packed.n_scored]
    )
    mask = _tree_attention_mask(grid[2], packed.depth, _activation_dtype(lm))
    with _attention_backend(device):
        hidden = model.base_model(
            input_ids=grid[0], attention_mask=mask, position_ids=grid[1], use_cache=False
        ).last_hidden_state
    flat_hidden = hidden.reshape(-1, hidden.shape[-1])
    bounds = packed.block_bounds.tolist()
    for block, start in enumerate(range(0, packed.n_inner, packed.logit_rows)):
        lo, hi = bounds[block], bounds[block + 1]
        stop = min(start + packed.logit_rows, packed.n_inner)
        logits = _logits(model, flat_hidden[inner_flat[start:stop]]).float()
        log_norm = torch.logsumexp(logits, dim=-1)  # see _target_logprob on precision
        local = parent_index[lo:hi] - start
        node_logprob[scored_nodes[lo:hi]] = logits[local, scored_tokens[lo:hi]] - log_norm[local]


def _tree_attention_mask(parent_cols: torch.Tensor, depth: int, dtype: torch.dtype) -> torch.Tensor:
    """Additive mask [rows, 1, width, width]: position i sees j iff j is i or one of its
    ancestors (padding sees only itself). Built on the device from the parent columns by
    following parents `depth` times, so only [rows, width] indices cross from the host."""
    import torch

    rows, width = parent_cols.shape
    cols = torch.arange(width, device=parent_cols.device).expand(rows, width)
    allowed = torch.zeros((rows, width, width), dtype=torch.bool, device=parent_cols.device)
    allowed.scatter_(2, cols.unsqueeze(-1), True)
    ancestor = parent_cols
    for _ in range(depth):
        present = ancestor >= 0
        allowed.scatter_(2, torch.where(present, ancestor, cols).unsqueeze(-1), True)
        ancestor = torch.where(present, parent_cols.gather(1, ancestor.clamp(min=0)), ancestor)
    mask = torch.zeros((rows, 1, width, width), dtype=dtype, device=parent_cols.device)
    return mask.masked_fill_(~allowed.unsqueeze(1), torch.finfo(dtype).min)


def _attention_backend(device: torch.device):
    """On CUDA, the memory-efficient SDPA kernel (math as fallback): it takes the tree mask and
    runs a new (rows, width) shape at once, where cuDNN's kernel first builds a plan per shape
    (a first pass 2-4x slower than the second, gpu-measured.md)."""
    if device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def _logit_rows(lm: LoadedModel) -> int:
    """lm_head rows at a time: LOGIT_ROWS on CPU; on CUDA as many as GPU_LOGIT_ELEMENTS float32
    logits allow (fewer, larger matrix products)."""
    if lm.device.type != "cuda":
        return LOGIT_ROWS
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    return max(LOGIT_ROWS, min(8192, GPU_LOGIT_ELEMENTS // vocab))


def _path_sums(forest: _Forest, node_logprob: np.ndarray) -> np.ndarray:
    """Sum of log-probabilities from the root down to each node, one depth level at a time."""
    total = node_logprob.copy()
    by_depth = np.argsort(forest.depths, kind="stable")
    bounds = np.searchsorted(forest.depths[by_depth], np.arange(int(forest.depths.max()) + 2))
    for depth in range(1, len(bounds) - 1):
        level = by_depth[bounds[depth]:bounds[depth + 1]]
        total[level] += total[forest.parents[level]]
    return total


def _logits(model: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """What the causal-LM head would compute for these hidden states (incl. Gemma's softcap)."""
    import torch

    logits = model.get_output_embeddings()(hidden)
    softcap = getattr(model.config, "final_logit_softcapping", None)
    if softcap is not None:
        logits = torch.tanh(logits / softcap) * softcap
    return logits


def _target_logprob(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) in float32 as logit - logsumexp: torch.log_softmax's float32 CPU kernel is
    off by up to 6e-5 nats per token over Gemma's 262k vocabulary, logsumexp by 1e-6."""
    import torch

    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


def _activation_dtype(lm: LoadedModel) -> torch.dtype:
    embedding = lm.model.get_input_embeddings().weight
    return embedding.dtype if embedding.dtype.is_floating_point else lm.dtype


def _sliding_window(lm: LoadedModel) -> int | None:
    config = lm.model.config
    layer_types = getattr(config, "layer_types", None) or []
    window = getattr(config, "sliding_window", None)
    if window and (not layer_types or "sliding_attention" in layer_types):
        return int(window)
    return None


def _score_naive_ids(
    lm: LoadedModel, token_ids: list[list[int]], batch_size: int, progress: Progress | None
) -> np.ndarray:
    import torch

    model = lm.model
    result = np.zeros(len(token_ids), dtype=np.float64)
    done = 0
    with torch.inference_mode():
        for batch in padded_batches(token_ids, batch_size=batch_size):
            if batch.width < 2:
                continue  # nothing after the start token: NLL 0
            attention = batch.attention_mask
            logits = model(
                input_ids=batch.input_ids.to(lm.device), attention_mask=attention.to(lm.device)
            ).logits
            logits = logits[:, :-1].float()
            targets = batch.input_ids[:, 1:].to(lm.device)
            token_logprob = _target_logprob(logits, targets)
            token_logprob = token_logprob * attention[:, 1:].to(lm.device)
            result[batch.indices] = 0.0 - token_logprob.sum(dim=1).double().cpu().numpy()
            done += len(batch.indices)
            if progress is not None:
                progress(done, len(token_ids))
    return result
