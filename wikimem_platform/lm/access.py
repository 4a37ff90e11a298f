"""Access levels and what each lets an audit do: the one table every caller asks
(`Scorer.capabilities`), instead of testing which kind of model it holds.

- *weights*: a model loaded on this machine (`loading.LoadedModel`): everything.
- *prompt-logprobs*: a server that echoes every prompt token's log-probability
  (`endpoint.EndpointModel`): whole-sentence NLLs equal to the engine's, per-token log p, greedy
  completions; no next-token distribution, no gradients, no sampler of ours, no soft prompts.
- *top-logprobs*: the server's k most likely next tokens only: the ranking reads each sentence's
  NLL after the text before its value (a continuation); no log-probability of a whole text.
- *generation*: greedy completions only.

A leaf module (no project imports): the scorers and their callers all import it.
"""

from __future__ import annotations

from dataclasses import dataclass

# What a verdict from a model loaded on this machine was made with (every fact of an answer names
# its access: this, or the endpoint's level).
WEIGHTS = "weights"
PROMPT_LOGPROBS = "prompt-logprobs"
TOP_LOGPROBS = "top-logprobs"
GENERATION = "generation"
ACCESS_LEVELS = (PROMPT_LOGPROBS, TOP_LOGPROBS, GENERATION)  # what an endpoint can be registered with
# Access levels whose ranking reads log-probabilities (the WikiMem scores); GENERATION reads text.
RANKING_ACCESS = (PROMPT_LOGPROBS, TOP_LOGPROBS)
# Access levels that give no probability of a given text: no membership attack can run there.
NO_TEXT_PROBABILITY = (TOP_LOGPROBS, GENERATION)


@dataclass(frozen=True)
class Capabilities:
    """What a scorer at one access level can give; each field is a question a caller asks."""

    served: bool  # behind a server: every score is a request (costs quota), no weights here
    ranks: bool  # sentence NLLs for the WikiMem ranking (whole sentences, or continuations)
    reads_continuations: bool  # the ranking's NLLs are read after each sentence's prefix (top k)
    scores_text: bool  # the log-probability of a given text, per token too (membership attacks)
    scores_token_ids: bool  # NLLs of token-id sequences (ReCaLL prefixes, CRM reconstruction)
    has_distribution: bool  # the whole next-token distribution (min-k%++)
    has_gradients: bool  # a backward pass through the weights (gradient norm)
    samples: bool  # sampling with the model's own generator and seed (SaMIA)
    can_use_soft_prompts: bool  # soft prompts and an untrained control (they need the weights)
    rescores_in_float32: bool  # a low-precision run's close calls re-scored in float32 here
    generates: bool  # greedy completions


CAPABILITIES: dict[str, Capabilities] = {
    WEIGHTS: Capabilities(served=False, ranks=True, reads_continuations=False, scores_text=True,
                          scores_token_ids=True, has_distribution=True, has_gradients=True, samples=True,
                          can_use_soft_prompts=True, rescores_in_float32=True, generates=True),
    PROMPT_LOGPROBS: Capabilities(served=True, ranks=True, reads_continuations=False, scores_text=True,
                                  scores_token_ids=True, has_distribution=False, has_gradients=False, samples=False,
                                  can_use_soft_prompts=False, rescores_in_float32=False, generates=True),
    TOP_LOGPROBS: Capabilities(served=True, ranks=True, reads_continuations=True, scores_text=False,
                               scores_token_ids=False, has_distribution=False, has_gradients=False, samples=False,
                               can_use_soft_prompts=False, rescores_in_float32=False, generates=True),
    GENERATION: Capabilities(served=True, ranks=False, reads_continuations=False, scores_text=False,
                             scores_token_ids=False, has_distribution=False, has_gradients=False, samples=False,
                             can_use_soft_prompts=False, rescores_in_float32=False, generates=True),
}


def capabilities_of(access: str) -> Capabilities:
    """The table's row for `access`; an unknown level is an error, never a guess."""
    try:
        return CAPABILITIES[access]
    except KeyError:
        raise ValueError(f"unknown access level {access!r} (one of {', '.join(CAPABILITIES)})") from None
