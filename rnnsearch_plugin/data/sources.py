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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import IO, Any, Optional

from .textio import DataError, counted, input_file, lines_of, stream_lines

SEGMENT = re.compile(r"<seg[^>]*>(.*)</seg>")


@dataclass(frozen=True)
class Remote:
    """``url``, or the member ``member`` of the tar archive at ``url``."""

    url: str
    member: Optional[str] = None

    @property
    def file_name(self) -> str:
        return self.url.rsplit("/", 1)[1]


def sgml_segments(lines: Iterable[str]) -> Iterator[str]:
    """The text of each ``<seg>`` of a WMT (pseudo-)SGML file, whitespace collapsed, as
    sacreBLEU extracts it (no entity decoding: WMT's files carry raw text)."""
    return (" ".join(match[1].split()) for line in lines if (match := SEGMENT.search(line)))


def member_lines(archive: Path, member: str) -> Iterator[str]:
    """The lines of one member of a tar archive, one at a time; ``.gz`` members decompressed."""
    try:
        with tarfile.open(archive) as tar:
            handle: Optional[IO[bytes]] = tar.extractfile(member)
            if handle is None:
                raise KeyError(member)
            yield from lines_of(handle, f"{archive}:{member}")
    except KeyError:
        raise DataError(f"{archive} has no member {member}: is it the official archive?") from None
    except (tarfile.TarError, EOFError, OSError) as error:
        raise DataError(f"{archive} is not a readable tar archive ({error}); delete it and rerun") from None


@dataclass(frozen=True)
class TextFile:
    """The lines of a (possibly gzipped) file, or of a member of a tar archive (a ``.sgm`` member:
    its segments), read anew at each iteration."""

    path: Path
    member: Optional[str] = None

    def __iter__(self) -> Iterator[str]:
        if self.member is None:
            return stream_lines(self.path)
        lines = member_lines(self.path, self.member)
        return sgml_segments(lines) if self.member.endswith(".sgm") else iter(lines)


@dataclass(frozen=True)
class ParallelText:
    """Two line-aligned texts as pairs, ``names`` naming them; a different line count is a
    DataError naming both and their line counts, raised where the shorter ends."""

    names: tuple[str, str]
    sides: tuple[Iterable[str], Iterable[str]]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        first, second = (iter(side) for side in self.sides)
        pairs = 0
        for a, b in zip_longest(first, second):
            if a is None or b is None:
                longer = 1 + sum(1 for _ in (first if b is None else second))
                counts = (pairs + longer, pairs) if b is None else (pairs, pairs + longer)
                raise DataError(
                    f"{self.names[0]} {counted(counts[0])} but {self.names[1]} {counted(counts[1])}: the two sides must be line-aligned"
                )
            pairs += 1
            yield a, b


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

    def scratch_folder(self) -> Path:
        """Where readers keep their temporary files: the folder of the download cache (OUT). The
        system removes them whatever happens."""
        return self.cache.parent

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

    def text(self, name: str, remote: Optional[Remote]) -> TextFile:
        """The lines of ``name`` (e.g. 'newstest2014.fr'): the plain file ``name[.gz]`` of
        the local folder, else ``remote`` (a file, or a member of an archive)."""
        plain = self.local(name, f"{name}.gz")
        if plain is not None:
            self._record(plain, str(plain))
            return TextFile(plain)
        if self.local_dir is None and remote is None:
            raise DataError(f"{name} has no public download location: give its folder with --local-dir")
        if self.local_dir is not None and (remote is None or not remote.member or not self.local(remote.file_name)):
            archive = f" (or the archive {remote.file_name} from {remote.url})" if remote and remote.member else ""
            raise DataError(f"{name}[.gz]{archive} is not in {self.local_dir}; point --local-dir at the folder that holds it")
        assert remote is not None
        return TextFile(self.fetch(remote), remote.member)

    def parallel(self, name: str, remotes: dict[str, Optional[Remote]]) -> ParallelText:
        """``name.LANG`` for each of the two languages of ``remotes``, as pairs in their order;
        refuses different line counts instead of misaligning them."""
        names = tuple(f"{name}.{lang}" for lang in remotes)
        return ParallelText(names, tuple(self.text(f"{name}.{lang}", remote) for lang, remote in remotes.items()))  # type: ignore[arg-type]
