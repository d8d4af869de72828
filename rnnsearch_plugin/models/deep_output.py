"""Deep output with a single maxout hidden layer (Pascanu et al. 2014; Goodfellow et al. 2013),
Appendix A.2.2:

    t~_i = U_o s + V_o E y_{i-1} + C_o c_i        (s = s_{i-1} in A.2.2, s_i in Eq. (4))
    t_i  = [max{t~_{i,k(j-1)+1}, ..., t~_{i,kj}}]_{j=1..l}       (pool size k, 2 in the paper)
    p(y_i | ...) proportional to exp(y_i^T W_o t_i)

``forward`` gives t_i (dropped out in training), the decoder's features; ``output_projection`` is
W_o, which the decoder's ``output_layer`` applies, or ``criterions/chunked_cross_entropy.py`` a
chunk of positions at a time.
"""

from torch import Tensor, nn


class MaxoutDeepOutput(nn.Module):
    def __init__(
        self,
        state_size: int,
        embed_dim: int,
        context_size: int,
        maxout_units: int,
        vocab_size: int,
        pool_size: int = 2,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        pre_maxout = pool_size * maxout_units
        self.pool_size = pool_size
        self.state_projection = nn.Linear(state_size, pre_maxout)  # U_o (+ bias)
        self.embedding_projection = nn.Linear(embed_dim, pre_maxout, bias=False)  # V_o
        self.context_projection = nn.Linear(context_size, pre_maxout, bias=False)  # C_o
        self.dropout = nn.Dropout(dropout)
        self.output_projection = nn.Linear(maxout_units, vocab_size)  # W_o (+ bias)

    def forward(self, state: Tensor, embedded: Tensor, context: Tensor) -> Tensor:
        """s: ... x n, E y_{i-1}: ... x m, c_i: ... x 2n -> t_i: ... x l."""
        pre_maxout = self.state_projection(state) + self.embedding_projection(embedded) + self.context_projection(context)  # t~_i
        return self.maxout(pre_maxout)

    def maxout(self, pre_maxout: Tensor) -> Tensor:
        """t~: ... x (l k) -> t: ... x l, the maximum of each pool of k (dropped out in training)."""
        return self.dropout(pre_maxout.unflatten(-1, (-1, self.pool_size)).amax(-1))
