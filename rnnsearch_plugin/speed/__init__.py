"""The engine: the model of ``models/`` run a faster way on the same parameters, chosen once when
the model is built (``--engine``, ``engines``); nothing in ``models/`` but ``rnnsearch.py`` knows it
is here: ``build_model`` builds it, and ``prepare_for_inference_`` tells it translation's ``--amp``.

- ``engines``: the engines by name (``auto``, ``reference``, ``cpu``), chosen at build, and bfloat16's switch;
- ``tricks``: the CPU engine's choices, one named field each (``--engine-tricks``), fixed at build;
- ``cpu``: the CPU engine, the encoder and decoder subclassed, their recurrences replaced;
- ``recurrence``: the gated unit's step and masked recurrence with the tricks below;
- ``context``: c_i into the GRU and the deep output, in training and in decoding;
- ``scores``: the attention in beam search's group layout, fast routes for the known scores;
- ``activations``: tanh by the fastest exact route of the processor's kernels;
- ``beam_reordering``: beam search's rows, the source side held once per sentence;
- ``precision``: bfloat16 products on the CPU (``--amp``), states and softmax in float32;
- ``alignment_head``: the alignment head without its large tensors kept for backward;
- ``routes``: what the processor says of itself (its vendor picks the tanh route).
"""
