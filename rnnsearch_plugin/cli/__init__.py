"""The ``rnnsearch-*`` commands (``setup.cfg``'s entry points), one module each; ``commands`` sets up
logging before importing the ones that load models. rnnsearch-serve lives in ``serve/``.

- ``score``: rnnsearch-score, sacreBLEU of a fairseq-generate output, every sentence accounted for;
- ``average_checkpoints``: rnnsearch-average-checkpoints, loading weights-only;
- ``evaluate``: rnnsearch-evaluate, Table 1, Figure 2, Table 2 and Appendix C for trained systems;
- ``heatmaps``: rnnsearch-heatmaps, Figure 3;
- ``aer``: rnnsearch-aer, the alignment error rate against a gold standard (NAACL or Pharaoh format).
"""
