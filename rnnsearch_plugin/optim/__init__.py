"""Optimizers: ``rnnsearch_adadelta``, Appendix B.2's Adadelta with exact gradient-norm rescaling."""
