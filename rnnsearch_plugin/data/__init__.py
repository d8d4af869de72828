"""Data pipelines: raw parallel text -> (word | bpe | spm) -> fairseq-binarized data.

See ``scripts/prepare_data.py`` for the command; ``corpora`` reads each corpus into raw
splits, ``hansards`` cleans and splits the Canadian Hansards, ``schemes`` holds the three
preprocessing schemes and their inverses, ``pipeline`` runs the steps and writes the manifest,
``manifest`` reads it back as untrusted data (the pair, the tokeniser and subword model),
``alignments`` checks and binarises the training pairs' word alignments (guided alignment).
"""
