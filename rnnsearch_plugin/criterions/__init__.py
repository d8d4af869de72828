"""Training criteria: ``chunked_cross_entropy`` (fairseq's cross_entropy without B x T x vocabulary tensors;
``--alignment-lambda``: guided alignment, not the paper's)."""
