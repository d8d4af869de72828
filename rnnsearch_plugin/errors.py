"""The plugin's own error for a mistake in what the user gave: fairseq's commands and the plugin's
report it in one line (``fairseq_fixes/cli_errors.py``), never with a traceback."""


class UserInputError(ValueError):
    """A mistake in what the user gave (a file, an option, a data folder), named in one line with what to do."""
