"""rnnsearch-serve: a local translation server with a page that shows the soft alignment.

    rnnsearch-serve --path CHECKPOINT --data DATA/bin [--host 127.0.0.1 --port 8000]

- ``requests.py``: the JSON API's requests, their limits and their errors;
- ``batcher.py``: one thread runs the model, a batch of waiting requests at a time;
- ``translator.py``: a batch through the hub interface (``hub.py``: beam search, forced decoding),
  soft alignments (Eq. 6) merged into words as ``rnnsearch-heatmaps`` merges them;
- ``hosts.py``: which requests are answered (their Host one the server listens as, their Origin its own);
- ``app.py``: the Starlette application (the page at ``/``, ``/health``, ``/translate``, ``/score``);
- ``connections.py``: uvicorn's h11 protocol with a deadline on each request and a cap on the connections;
- ``cli.py``: the command, served by uvicorn (SIGTERM stops it as Ctrl-C does);
- ``static/``: the page, its script and style sheet (Figure 3 drawn as SVG, no other asset).
"""
