"""The English-French word-alignment gold standard of the Canadian Hansards (HLT-NAACL 2003
shared task, its trial part: 37 sentence pairs with sure and possible links drawn by people), in
the NAACL format ``rnnsearch-aer --gold FOLDER`` reads, fetched like the corpora: a folder that
holds its files is used as it is; into one that lacks them they are downloaded (``sources.download``:
through a ``.part`` file, one at a time), from their public repository or a mirror, and each is
checked against the SHA-256 of the copy the project's results were scored with.
"""

from pathlib import Path
from typing import Optional

from .sources import download, sha256
from .textio import DataError

PAIR = ("en", "fr")  # English dev.e, French dev.f
ORIGIN = (
    "https://raw.githubusercontent.com/uva-slpl/nlp2/2d80c84152369453bcf67d8bab0e54520b2eb427/"
    "resources/project_neuralibm-2019/data/validation"
)
FILES = {  # name: SHA-256
    "dev.e": "56a871f16eafc2b44f9ba5942a636e2949baf288f228561f1889d821c04398d0",
    "dev.f": "fb337c8e86297a538ebe533f9d283dc6e186961ab9ca032257bc1c1769f71b6e",
    "dev.wa.nonullalign": "1c04fe099aa83c1ef0fd1044547e34684618f2362e20da8dca3d94cb3b096f74",
}


def fetch(folder: Path, mirror: Optional[str] = None) -> None:
    """Downloads into ``folder`` each file of the gold standard it lacks, from ``ORIGIN`` or
    ``mirror`` (a URL prefix that holds the three files); a download that differs from the
    expected file is removed, and the error says so."""
    if folder.exists() and not folder.is_dir():
        raise DataError(f"--gold {folder} is a file: give the folder to download the gold standard into")
    for name, expected in FILES.items():
        target = folder / name
        if target.exists():
            continue
        url = f"{(mirror or ORIGIN).rstrip('/')}/{name}"
        download(url, target, instead=f"check the connection, or give --gold a folder that holds {', '.join(FILES)}")
        if sha256(target) != expected:
            target.unlink()
            raise DataError(f"{url} is not the gold standard's {name} (its SHA-256 differs): check --gold-mirror, or download it yourself")
