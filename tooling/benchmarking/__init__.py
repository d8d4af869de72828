"""The parts of ``tooling/benchmark.py``, one job each:

workers.py          what runs inside one measurement process (``benchmark.py --worker KIND JOB``)
sections.py         one function per section: its variants alternated, each run in a fresh process
tricks.py           the tricks section: each speed trick switched off, on the step it serves
report.py           OUT/results.md: the header and one table per section
registry.py         the sections by name (--sections), each with its run and its table
variants.py         what is measured: the models and options of each row, and the peer
fairseq_options.py  the fairseq command lines: the corpus's pair, the device, the Trainer's options
environment.py      the machine and the malloc settings recorded and run under
"""
