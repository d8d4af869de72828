"""The alignment head: which source word each emitted target word translates. Not the paper's,
and off by default (``--alignment-head``); translation never reads it.

The paper's alpha_i (Eq. 6) is computed from s_{i-1}, before y_i is chosen: it says where the
decoder looks to predict the next word, not which source word the word it emits translates. The
head is read once y_i is known. It splits the question as the IBM models do, into where to look
(from the decoder, which knows y_<i and c_i) and what each source word translates into (from
the word alone, so that the link is a word's, not the sentence's that h_j summarises):

    pi_ij      = softmax_j( v_b^T tanh(W_b q_i + U_b h_j) )      q_i = s_i, the state y_i was
                                                                  predicted from (Eq. 4); full
                                                                  context: [s_i ; r_{i+1}]
    p(y | x_j) = softmax_y( L tanh(P E-bar x_j) + b_L )           a lexicon over the target words
    a_ij       = pi_ij p(y_i | x_j) / sum_k pi_ik p(y_i | x_k)    the head's output: pi's
                                                                  posterior once y_i is known
    log p_a(y_i) = log sum_j pi_ij p(y_i | x_j)                   the head's own likelihood of y_i,
                                                                  from the source through a_ij alone

r_{i+1} is a backward GRU's state over the target words after y_i, E y_T ... E y_{i+1} (0 after
the last): with it, where to look also knows what comes next (Garg et al. 2019's full context).
pi_ij never sees y_i itself, so a_ij is y_i's posterior and p_a a proper likelihood: the head
learns without any links by maximising p_a (the objective of Zenkel et al. 2019, predicting y_i
from the source through the alignment alone), or from given links by the cross-entropy of a_ij
with them (Garg et al. 2019), or both (``criterions/chunked_cross_entropy.py``).

a_ij is 0 exactly on padded source positions and each row sums to 1. E-bar x_j is the encoder's
source embedding, h_j its annotations (RNNencdec: its forward states), E y_i the decoder's target
embedding; the head holds W_b, U_b (+ b_b), v_b, P (+ b_P), L, b_L and, with full context, the
backward GRU.
"""

import torch
from torch import Tensor, nn

from .gru import GatedRecurrentUnit, run_masked_recurrence

CONTEXTS = ("causal", "full")


class AlignmentHead(nn.Module):
    def __init__(
        self,
        state_size: int,
        annotation_size: int,
        source_embed_dim: int,
        target_embed_dim: int,
        target_vocab_size: int,
        hidden_size: int,
        context: str = "causal",
    ) -> None:
        super().__init__()
        if context not in CONTEXTS:
            raise ValueError(f"context must be one of {CONTEXTS}, not {context!r}")
        self.following_words = GatedRecurrentUnit(target_embed_dim, state_size) if context == "full" else None  # r
        query_size = 2 * state_size if self.following_words is not None else state_size
        self.query_projection = nn.Linear(query_size, hidden_size, bias=False)  # W_b
        self.annotation_projection = nn.Linear(annotation_size, hidden_size)  # U_b (+ b_b)
        self.score = nn.Linear(hidden_size, 1, bias=False)  # v_b
        self.source_word = nn.Linear(source_embed_dim, hidden_size)  # P (+ b_P)
        self.lexicon = nn.Linear(hidden_size, target_vocab_size)  # L, b_L

    def forward(
        self,
        states: Tensor,
        emitted: Tensor,
        emitted_embeddings: Tensor,
        target_mask: Tensor,
        annotations: Tensor,
        source_embeddings: Tensor,
        padding_mask: Tensor,
    ) -> tuple[Tensor, Tensor]:
        """states s_i: B x T x n; emitted y_i: B x T, their embeddings E y_i: B x T x m and
        target_mask: B x T (True on real target words); annotations h_j: B x S x 2n;
        source_embeddings E-bar x_j: B x S x m; padding_mask: B x S (True at padding)
        -> (a: B x T x S, log p_a(y_i): B x T)."""
        query = self.query(states, emitted_embeddings, target_mask)
        where = widened(self.prior_energies(query, annotations))
        log_prior = where.masked_fill(padding_mask[:, None], float("-inf")).log_softmax(-1)  # log pi_ij
        energies = log_prior + self.log_lexicon(emitted, source_embeddings)  # log pi_ij p(y_i | x_j)
        return energies.softmax(-1), energies.logsumexp(-1)

    def query(self, states: Tensor, emitted_embeddings: Tensor, real: Tensor) -> Tensor:
        """q_i = s_i, or [s_i ; r_{i+1}] with full context."""
        if self.following_words is None:
            return states
        inputs = self.following_words.input_projection(emitted_embeddings)
        read_back, _ = run_masked_recurrence(self.following_words, inputs, real, reverse=True)  # r_i: y_T ... y_i
        following = torch.cat([read_back[:, 1:], torch.zeros_like(read_back[:, :1])], dim=1)  # r_{i+1}
        return torch.cat([states, following.to(states.dtype)], dim=-1)

    def prior_energies(self, query: Tensor, annotations: Tensor) -> Tensor:
        """v_b^T tanh(W_b q_i + U_b h_j) for every i and j: B x T x S."""
        hidden = torch.tanh(self.query_projection(query)[:, :, None] + self.annotation_projection(annotations)[:, None])
        return self.score(hidden).squeeze(-1)

    def log_lexicon(self, emitted: Tensor, source_embeddings: Tensor) -> Tensor:
        """log p(y_i | x_j) for every i and j: B x T x S."""
        words = torch.tanh(self.source_word(source_embeddings))  # w_j = tanh(P E-bar x_j): B x S x h
        log_partition = self.log_partition(words)  # log Z_j: B x S
        rows = self.lexicon.weight[emitted]  # L_{y_i}: B x T x h
        logits = widened(torch.bmm(rows.to(words.dtype), words.transpose(1, 2))) + widened(self.lexicon.bias[emitted])[:, :, None]
        return logits - log_partition[:, None]

    def log_partition(self, words: Tensor) -> Tensor:
        """log Z_j = log sum_y exp(L_y w_j + b_y), the lexicon's normaliser: B x S x h -> B x S."""
        return widened(self.lexicon(words)).logsumexp(-1)


def widened(tensor: Tensor) -> Tensor:
    """``tensor`` in float32 at least (the products may run in bfloat16 under --amp): the softmaxes'
    and the likelihood's dtype."""
    return tensor.to(torch.promote_types(tensor.dtype, torch.float32))
