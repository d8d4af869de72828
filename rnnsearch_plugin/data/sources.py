"""Where raw text comes from: a local folder of already-downloaded files, or the official
location, downloaded once into a cache (optionally through a mirror).

A ``Remote`` is a file at a URL, or a member of a tar archive at a URL: WMT distributes its
sets as archives (``dev.tgz``, ``test-full.tgz``, ...). A local folder may hold either the
plain text files (``newstest2014.fr`` or ``newstest2014.fr.gz``) or the archives as they
were downloaded (``test-full.tgz``); nothing is ever written there.
"""

import hashlib
import os
import re
import tarfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Optional

from .textio import DataError, counted, decode_lines, input_file, read_lines

SEGMENT = re.compile(r"<seg[^>]*>(.*)</seg>")


@dataclass(frozen=True)
class Remote:
    """``url``, or the member ``member`` of the tar archive at ``url``."""

    url: str
    member: Optional[str] = None

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[1]


def sgml_segments(lines: list[str]) -> list[str]:
    """The text of each ``<seg>`` of a WMT (pseudo-)SGML file, whitespace collapsed, as
    sacreBLEU extracts it (no entity decoding: WMT's files carry raw text)."""
    return [" ".join(match[1].split()) for line in lines if (match := SEGMENT.search(line))]


def read_member(archive: Path, member: str) -> list[str]:
    """The lines of one member of a tar archive; ``.gz`` members decompressed, ``.sgm``
    members reduced to their segments."""
    where = f"{archive}:{member}"
    try:
        with tarfile.open(archive) as tar:
            handle: Optional[IO[bytes]] = tar.extractfile(member)
            if handle is None:
                raise KeyError(member)
            lines = decode_lines(handle.read(), where)
    except KeyError:
        raise DataError(f"{archive} has no member {member}: is it the official archive?") from None
    except (tarfile.TarError, OSError) as error:
        raise DataError(f"{archive} is not a readable tar archive ({error}); delete it and rerun") from None
    return sgml_segments(lines) if member.endswith(".sgm") else lines


def sha256(path: Path) -> str:
    """The digest of an input file (``textio.input_file``: a folder is refused in one line)."""
    digest = hashlib.sha256()
    with open(input_file(path), "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, target: Path, instead: str = "download it yourself and use --local-dir") -> None:
    """``url`` to ``target`` through ``target.part``, with progress every 5%; a failure says what
    to do ``instead``."""
    partial = target.with_name(target.name + ".part")
    print(f"| downloading {url}", flush=True)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as out:
            total, done, reported = int(response.headers.get("Content-Length") or 0), 0, 0
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
                done += len(block)
                if total and done * 20 // total > reported:
                    reported = done * 20 // total
                    print(f"|   {target.name}: {done >> 20} of {total >> 20} MiB", flush=True)
    except (OSError, ValueError) as error:
        raise DataError(f"downloading {url} failed ({error}); {instead}") from None
    os.replace(partial, target)


@dataclass
class Sources:
    """Finds raw files in ``local_dir`` or downloads them into ``cache``; ``mirror`` replaces
    the directory part of every official URL. ``origins`` records where each file came from."""

    local_dir: Optional[Path]
    cache: Path
    mirror: Optional[str] = None
    origins: dict[str, dict[str, Any]] = field(default_factory=dict)

    def local(self, *names: str) -> Optional[Path]:
        if self.local_dir is None:
            return None
        return next((self.local_dir / n for n in names if (self.local_dir / n).exists()), None)

    def fetch(self, remote: Remote) -> Path:
        """The file of ``remote.url``: from the local folder (``text`` has checked it is
        there), else downloaded (once)."""
        if self.local_dir is not None:
            path = self.local_dir / remote.file_name
            return self._record(path, str(path))
        url = f"{self.mirror.rstrip('/')}/{remote.file_name}" if self.mirror else remote.url
        target = self.cache / remote.file_name
        if not target.exists():
            download(url, target)
        return self._record(target, url)

    def _record(self, path: Path, origin: str) -> Path:
        if path.name not in self.origins:
            self.origins[path.name] = {"from": origin, "sha256": sha256(path)}
        return path

    def record(self, path: Path, **details: Any) -> None:
        """A file the user named (not a corpus's official one), with ``details`` for the manifest."""
        self.origins.setdefault(str(path), {"from": str(path), "sha256": sha256(path), **details})

    def text(self, name: str, remote: Optional[Remote]) -> list[str]:
        """The lines of ``name`` (e.g. 'newstest2014.fr'): the plain file ``name[.gz]`` of
        the local folder, else ``remote`` (a file, or a member of an archive)."""
        plain = self.local(name, f"{name}.gz")
        if plain is not None:
            self._record(plain, str(plain))
            return read_lines(plain)
        if self.local_dir is None and remote is None:
            raise DataError(f"{name} has no public download location: give its folder with --local-dir")
        if self.local_dir is not None and (remote is None or not remote.member or not self.local(remote.file_name)):
            archive = f" (or the archive {remote.file_name} from {remote.url})" if remote and remote.member else ""
            raise DataError(f"{name}[.gz]{archive} is not in {self.local_dir}; point --local-dir at the folder that holds it")
        assert remote is not None
        path = self.fetch(remote)
        return read_member(path, remote.member) if remote.member else read_lines(path)

    def parallel(self, name: str, remotes: dict[str, Optional[Remote]]) -> dict[str, list[str]]:
        """``name.LANG`` for each language of ``remotes``; refuses different line counts instead
        of misaligning them."""
        return aligned({f"{name}.{lang}": self.text(f"{name}.{lang}", remote) for lang, remote in remotes.items()}, list(remotes))


def aligned(files: dict[str, list[str]], langs: list[str]) -> dict[str, list[str]]:
    """{language: lines} of line-aligned files ({name: lines}, in the order of ``langs``), or
    DataError naming both files and their line counts."""
    (first, a), (second, b) = files.items()
    if len(a) != len(b):
        raise DataError(f"{first} {counted(len(a))} but {second} {counted(len(b))}: the two sides must be line-aligned")
    return dict(zip(langs, (a, b)))
