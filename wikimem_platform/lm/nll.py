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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from wikimem_platform.lm.batching import padded_batches
from wikimem_platform.lm.loading import LoadedModel

if TYPE_CHECKING:
    import torch

DEFAULT_CHUNK_TOKENS = 256  # tree nodes per packed row: attention cost grows with its square
TOKENS_PER_SENTENCE = 32  # converts LoadedModel.batch_size (sentences) into tokens per forward
LOGIT_ROWS = 128  # lm_head rows at a time: 128 x 262k float32 = 134 MB for Gemma 3

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
    sentences = list(sentences)
    cache = {} if cache is None else cache
    todo = list(dict.fromkeys(s for s in sentences if s not in cache))
    if todo:
        values = score_token_ids(
            lm,
            lm.encode(todo),
            batch_tokens=batch_tokens,
            chunk_tokens=chunk_tokens,
            progress=progress,
        )
        cache.update(zip(todo, values.tolist()))
    return np.array([cache[s] for s in sentences], dtype=np.float64)


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
    """The engine on full token ids (start token included); the first token is never scored."""
    import torch

    sequences = [tuple(int(t) for t in ids) for ids in token_ids]
    result = np.zeros(len(sequences), dtype=np.float64)
    distinct = list(dict.fromkeys(sequences))
    index_of = {seq: i for i, seq in enumerate(distinct)}
    nll = np.zeros(len(distinct), dtype=np.float64)

    # Sliding-window layers would need a windowed tree mask; sentences that long go the naive way.
    window = _sliding_window(lm)
    too_long = [i for i, seq in enumerate(distinct) if window is not None and len(seq) > window]
    if too_long:
        nll[too_long] = _score_naive_ids(lm, [list(distinct[i]) for i in too_long], lm.batch_size, None)
    long_set = set(too_long)
    tree_ids = [i for i in range(len(distinct)) if i not in long_set and len(distinct[i]) > 1]

    chunks = _build_chunks([distinct[i] for i in tree_ids], tree_ids, chunk_tokens)
    budget = batch_tokens or lm.batch_size * TOKENS_PER_SENTENCE
    total, done = len(distinct), len(distinct) - len(tree_ids)
    with torch.inference_mode():
        for batch in _batches_of_chunks(chunks, budget):
            for chunk, node_logprob in zip(batch, _run_chunks(lm, batch)):
                path_logprob = _cumulate_along_paths(chunk.parents, node_logprob)
                nll[chunk.sentence_ids] = -path_logprob[chunk.end_nodes]
                done += len(chunk.sentence_ids)
            if progress is not None:
                progress(done, total)
    for i, seq in enumerate(sequences):
        result[i] = nll[index_of[seq]]
    return result


@dataclass
class _Chunk:
    """Whole root-to-leaf paths of the prefix tree, in one packed row (parents before children)."""

    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)  # parent node in this chunk, -1 for a root
    depths: list[int] = field(default_factory=list)  # position id: distance from the root
    sentence_ids: list[int] = field(default_factory=list)  # which sentences end here ...
    end_nodes: list[int] = field(default_factory=list)  # ... and at which node
    n_inner: int = 0  # nodes with children: only these go through the model


def _build_chunks(sequences: list[tuple[int, ...]], ids: list[int], chunk_tokens: int) -> list[_Chunk]:
    """Lay the sorted sequences out as a prefix tree, cut into chunks of at most chunk_tokens
    inner nodes (a longer sentence gets a chunk of its own). In sorted order, a sequence's
    longest common prefix with any earlier one is the one with its predecessor, so one stack
    of node indices suffices."""
    order = sorted(range(len(sequences)), key=lambda k: sequences[k])
    chunks: list[_Chunk] = []
    chunk = _Chunk()
    path: list[int] = []  # node indices of the previous sequence's tokens in this chunk
    previous: tuple[int, ...] = ()
    for k in order:
        seq = sequences[k]
        shared = _common_prefix_length(previous, seq)
        # New nodes are all inner but the last; the previous end node turns inner if extended.
        added_inner = len(seq) - shared - 1 + (0 < shared == len(previous))
        if chunk.tokens and chunk.n_inner + added_inner > chunk_tokens:
            chunks.append(chunk)
            chunk, path, shared = _Chunk(), [], 0
            added_inner = len(seq) - 1
        del path[shared:]
        for depth in range(shared, len(seq)):
            chunk.tokens.append(seq[depth])
            chunk.parents.append(path[-1] if path else -1)
            chunk.depths.append(depth)
            path.append(len(chunk.tokens) - 1)
        chunk.n_inner += added_inner
        chunk.sentence_ids.append(ids[k])
        chunk.end_nodes.append(path[len(seq) - 1])
        previous = seq
    if chunk.tokens:
        chunks.append(chunk)
    return chunks


def _common_prefix_length(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _batches_of_chunks(chunks: list[_Chunk], budget_tokens: int) -> list[list[_Chunk]]:
    """Chunks of similar size together (longest first), about budget_tokens inner nodes per
    forward."""
    ordered = sorted(chunks, key=lambda c: -c.n_inner)
    batches, current = [], []
    for chunk in ordered:
        width = current[0].n_inner if current else chunk.n_inner
        if current and width * (len(current) + 1) > budget_tokens:
            batches.append(current)
            current = []
        current.append(chunk)
    if current:
        batches.append(current)
    return batches


def _tree_mask(parents: np.ndarray, width: int) -> np.ndarray:
    """allowed[i, j]: node j is node i or one of its ancestors (padding sees only itself)."""
    allowed = np.zeros((width, width), dtype=bool)
    np.fill_diagonal(allowed, True)
    for i, parent in enumerate(parents.tolist()):  # parents come before children
        if parent >= 0:
            allowed[i, :i] |= allowed[parent, :i]
    return allowed


def _run_chunks(lm: LoadedModel, chunks: list[_Chunk]) -> list[np.ndarray]:
    """log p(token | ancestors) for every node of every chunk (0 for roots), in one forward.

    Leaves (mostly each sentence's last token) are scored from their parent's hidden state and
    never enter the model themselves: about a third of the tree."""
    import torch

    model, device = lm.model, lm.device
    inner_positions = []  # per chunk: its inner nodes' row positions (-1 for leaves)
    for chunk in chunks:
        parents = np.asarray(chunk.parents)
        is_inner = np.zeros(len(parents), dtype=bool)
        is_inner[parents[parents >= 0]] = True
        position = np.full(len(parents), -1)
        position[is_inner] = np.arange(int(is_inner.sum()))
        inner_positions.append(position)
    width = max(int((pos >= 0).sum()) for pos in inner_positions)
    input_ids = torch.zeros((len(chunks), width), dtype=torch.long)
    position_ids = torch.zeros((len(chunks), width), dtype=torch.long)
    allowed = np.zeros((len(chunks), 1, width, width), dtype=bool)
    rows, parent_cols, child_tokens, owners = [], [], [], []
    for row, (chunk, position) in enumerate(zip(chunks, inner_positions)):
        inner = np.flatnonzero(position >= 0)
        parents, tokens = np.asarray(chunk.parents), np.asarray(chunk.tokens)
        input_ids[row, : len(inner)] = torch.from_numpy(tokens[inner])
        position_ids[row, : len(inner)] = torch.from_numpy(np.asarray(chunk.depths)[inner])
        inner_parents = np.where(parents[inner] >= 0, position[np.maximum(parents[inner], 0)], -1)
        allowed[row, 0] = _tree_mask(inner_parents, width)
        # Each non-root node's token is scored from its parent's hidden state.
        scored = np.flatnonzero(parents >= 0)
        rows.append(np.full(len(scored), row))
        parent_cols.append(position[parents[scored]])
        child_tokens.append(tokens[scored])
        owners.append(np.stack([np.full(len(scored), row), scored], axis=1))

    mask_dtype = _activation_dtype(lm)
    mask = torch.zeros(allowed.shape, dtype=mask_dtype)
    mask.masked_fill_(torch.from_numpy(~allowed), torch.finfo(mask_dtype).min)
    hidden = model.base_model(
        input_ids=input_ids.to(device),
        attention_mask=mask.to(device),
        position_ids=position_ids.to(device),
        use_cache=False,
    ).last_hidden_state

    rows_np, parents_np = np.concatenate(rows), np.concatenate(parent_cols)
    tokens_np, owners_np = np.concatenate(child_tokens), np.concatenate(owners)
    unique_parents, which = np.unique(rows_np * width + parents_np, return_inverse=True)
    flat_hidden = hidden.reshape(-1, hidden.shape[-1])
    parent_index = torch.from_numpy(unique_parents).to(device)
    which_t = torch.from_numpy(which).to(device)
    tokens_t = torch.from_numpy(tokens_np).to(device)
    logprob = torch.empty(len(tokens_np), dtype=torch.float32, device=device)
    for start in range(0, len(unique_parents), LOGIT_ROWS):
        stop = min(start + LOGIT_ROWS, len(unique_parents))
        logits = _logits(model, flat_hidden[parent_index[start:stop]]).float()
        log_norm = torch.logsumexp(logits, dim=-1)  # see _target_logprob on precision
        selected = (which_t >= start) & (which_t < stop)
        local = which_t[selected] - start
        logprob[selected] = logits[local, tokens_t[selected]] - log_norm[local]
    logprob_np = logprob.cpu().numpy().astype(np.float64)

    out = [np.zeros(len(c.tokens), dtype=np.float64) for c in chunks]
    for row in range(len(chunks)):
        in_row = owners_np[:, 0] == row
        out[row][owners_np[in_row, 1]] = logprob_np[in_row]
    return out


def _cumulate_along_paths(parents: list[int], node_logprob: np.ndarray) -> np.ndarray:
    """Sum of log-probabilities from the root down to each node."""
    total = node_logprob.copy()
    for i, parent in enumerate(parents):
        if parent >= 0:
            total[i] += total[parent]
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
