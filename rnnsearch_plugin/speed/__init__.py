"""What makes the model fast without changing what it computes:

- ``activations``: tanh by the fastest exact route of the processor's kernels;
- ``beam_reordering``: beam search's rows, the source side held once per sentence;
- ``step_products``: a recurrence's weight gradients in one product per sequence;
- ``precision``: bfloat16 products on the CPU (``--amp``), states and softmax in float32;
- ``routes``: the devices these routes serve (the CPU, where they were measured);
- ``flops``: the analytic multiply-add count of A.2, for model-FLOP utilisation.
"""
