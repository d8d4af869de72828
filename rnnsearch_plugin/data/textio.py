"""Reading and writing parallel text without ever losing or misaligning a line."""
import gzip
import os
from pathlib import Path


class DataError(ValueError):
    """Bad input data: reported in one line naming the file and what to do."""


def read_lines(path: Path) -> list[str]:
    """The lines of a (possibly gzipped) UTF-8 file, without line ends."""
    if not path.exists():
        raise DataError(f"{path} does not exist")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
            return [line.rstrip("\r\n") for line in handle]
    except UnicodeDecodeError as error:
        raise DataError(f"{path} is not valid UTF-8 ({error.reason} at byte {error.start}); re-encode it") from None


def write_atomic(path: Path, lines: list[str]) -> None:
    """Write under a temporary name and rename when complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
        handle.writelines(line + "\n" for line in lines)
    os.replace(temporary, path)
