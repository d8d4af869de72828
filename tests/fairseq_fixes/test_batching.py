"""Every sentence counts: fairseq's batching, as the plugin leaves it, covers every index once."""

import numpy as np
import pytest
from fairseq.data import data_utils

from rnnsearch_plugin.fairseq_fixes import batching


@pytest.mark.parametrize("multiple", [1, 8])
@pytest.mark.parametrize("limits", [{"max_tokens": 120}, {"max_sentences": 16}, {"max_tokens": 300, "max_sentences": 10}])
def test_every_index_is_batched_exactly_once(multiple, limits):
    batching.install()
    lost = []
    for size in range(1, 201):
        lengths = np.random.RandomState(size).randint(1, 40, size=size).astype(np.int64)
        indices = np.argsort(lengths, kind="mergesort").astype(np.int64)
        for vectorised in (True, False):
            batches = data_utils.batch_by_size(
                indices,
                lambda i, lengths=lengths: lengths[i],
                num_tokens_vec=lengths[indices] if vectorised else None,
                required_batch_size_multiple=multiple,
                **limits,
            )
            seen = np.concatenate(batches) if batches else np.array([], dtype=np.int64)
            if sorted(seen.tolist()) != list(range(size)):
                lost.append((size, vectorised, size - len(seen)))
            for batch in batches:  # the limits still hold
                assert len(batch) <= limits.get("max_sentences", size)
                assert len(batch) * lengths[batch].max() <= limits.get("max_tokens", 10**9)
    assert lost == []
