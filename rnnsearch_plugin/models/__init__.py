"""The paper's model, one module per part (Sections 3-4, Appendix A, B.1): the reference, read
top to bottom with the paper open (``speed/`` runs the same parameters faster, ``--engine``):

- ``gru``: the gated hidden unit (A.1.1) and its masked recurrence over a padded batch;
- ``encoder``: the bidirectional encoder (3.2, A.2.1), unidirectional for RNNencdec;
- ``attention``: the alignment model (3.1, A.1.2), and the contract another score keeps;
- ``deep_output``: the deep output with one maxout layer (A.2.2);
- ``decoder``: the conditional GRU decoder (A.2.2), its loop the equations in their order;
- ``initialization``: the parameter initialisation (B.1);
- ``alignment_head``: not the paper's, off by default: which source word each emitted word
  translates, read by nothing the paper's model computes;
- ``rnnsearch``: the ``rnnsearch`` and ``rnnencdec`` fairseq models and their architectures (4.2,
  A.2.3), and the one place where the engine is chosen.
"""
