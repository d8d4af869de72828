"""bfloat16 mixed precision on the CPU (fairseq's ``--amp``, which on its own autocasts CUDA only).

fairseq enters ``torch.cuda.amp.autocast`` around the criterion in ``FairseqTask.train_step``, so
on a CPU ``--amp`` trains in float32, and ``--bf16`` takes its TPU path. With ``--amp`` on a CPU
the engine's encoder and decoder run their own forward under ``torch.autocast("cpu", torch.bfloat16)``
(the engine's ``bfloat16`` choice, ``tricks.py``) where the processor multiplies bfloat16 natively
(AVX512-BF16 or AMX), at several times its float32 matmul rate (``benchmarks/changes.md``). What runs in which precision:

- bfloat16: every matrix product (the GRUs' W x and U h, the alignment model's W_a s, U_a h and
  v_a^T, c_i = sum_j alpha_ij h_j, the deep output's U_o, V_o, C_o and W_o) and the elementwise
  gate arithmetic on their results (sigmoid, tanh, maxout), whose inputs are bfloat16 already.
- float32: the parameters, their gradients and the optimizer (fairseq's ``AMPOptimizer`` wraps
  ours, so B.2's Adadelta and exact rescaling see float32 gradients); the recurrent states h_j
  and s_i (``state_dtype``: the interpolation (1 - z) h + z h~ adds a bfloat16 step to a float32
  state, so rounding does not compound over a long sentence); the attention's softmax (alpha is
  exactly 0 on padding and sums to 1); the log-softmax and the loss (``criterions/chunked_cross_entropy.py``).

Translation (``prepare_for_inference_``) also stores the weights in bfloat16 once, rather than
autocast casting them again at every decoding step.

oneDNN, which runs the bfloat16 products, compiles each product for its exact shape, keeping the
last ``ONEDNN_PRIMITIVE_CACHE_CAPACITY`` (1,024 by default); ``keep_compiled_products`` raises it.
"""

import logging
import os

import torch
from torch import Tensor

from ..fairseq_fixes.cpu_amp import silence_disabled_cuda_warnings

logger = logging.getLogger(__name__)
PRIMITIVE_CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
COMPILED_PRODUCTS = 16384  # our capacity for it (``keep_compiled_products``)


def bfloat16_supported() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX tiles), as torch sees it.
    Without them oneDNN emulates bfloat16 products, slower than float32."""
    return torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()


def cpu_bfloat16_available(requested: bool) -> bool:
    """``requested`` where the processor has bfloat16 arithmetic; else one line saying why not."""
    if requested and not bfloat16_supported():
        logger.warning("--amp: this processor has no bfloat16 arithmetic (no AVX512-BF16 or AMX), so the model runs in float32")
        return False
    if requested:
        silence_disabled_cuda_warnings()
        keep_compiled_products()
    return requested


def keep_compiled_products() -> None:
    """Keep up to ``COMPILED_PRODUCTS`` compiled oneDNN products rather than 1,024, unless the user set
    ``ONEDNN_PRIMITIVE_CACHE_CAPACITY``. oneDNN compiles each bfloat16 product for its exact shape,
    and every batch of new lengths (B sentences, S and T words) brings tens of new shapes: a Multi30k
    epoch at --max-tokens 4000 brings thousands. With only 1,024 kept, every epoch compiled them all
    again; with 16,384 a corpus's shapes are compiled once per run. Only compiled code is kept, so
    the results do not change (``benchmarks/changes.md``: the epochs' speed and the peak memory).
    oneDNN reads the setting once, before its first product, which model building precedes."""
    os.environ.setdefault(PRIMITIVE_CACHE, str(COMPILED_PRODUCTS))


def product_dtype(like: Tensor) -> torch.dtype:
    """The dtype matrix products of ``like`` run in: autocast's, or ``like``'s own."""
    device = like.device.type
    return torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else like.dtype


def state_dtype(like: Tensor) -> torch.dtype:
    """The dtype recurrent states are held in: float32 under autocast (this module's, or
    fairseq's --amp on a GPU), else that of the products (``like``)."""
    return torch.float32 if torch.is_autocast_enabled(like.device.type) else like.dtype


def at_least_float32(dtype: torch.dtype) -> torch.dtype:
    """float32 for half-precision dtypes, else ``dtype`` (float64 stays float64)."""
    return torch.promote_types(dtype, torch.float32)
