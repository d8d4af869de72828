"""Analyses of Section 5 and the appendix: alignments (Figure 3), word links and their symmetrisation,
alignment error rate, BLEU by length and without unknown words (Table 1, Figure 2), training statistics
(Table 2)."""
