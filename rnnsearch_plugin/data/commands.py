"""fairseq's console scripts, as the data stages run them: from this Python's environment (also
when it is not activated), shown by name as a user would type them, not by the environment's path."""

import subprocess
import sys
from pathlib import Path


def console_script(name: str) -> str:
    """A console script of this Python's environment, also when it is not activated."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else name


def run_shown(command: list[str]) -> None:
    """Prints ``command`` as "| NAME ARGS..." (the script by its name), then runs it; an error ends in CalledProcessError."""
    print("| " + " ".join([Path(command[0]).name, *command[1:]]), flush=True)
    subprocess.run(command, check=True)
