"""The ``markdown`` kind: a folder of Markdown memory files, in the tier layout agent frameworks
keep on disk (seed 000): per agent or crew a folder holding ``AGENT.md``, ``CREW.md``,
``PERSONA.md``, ``pins.md``, ``lessons.md``, ``daily/<YYYY-MM-DD>.md`` and ``peers/<slug>.md``,
plus ``facts/<key>.md`` for memadmin's ``facts`` tier (the same shape as ``peers``).

Options (``ProviderConfig.options``):

- ``root``: the folder holding one sub-folder per memadmin namespace (required);
- ``folders``: ``{namespace slug: folder relative to root}`` where it is not the slug itself;
- ``subject_marker``: a line prefix such as ``"Data subject:"`` naming the data subject in
  files that have no front matter (the front matter key ``data_subject_id`` always counts).

Item ids are ``<folder>:<tier-relative label>`` with every ``/`` written ``:``
(``support-bot:peers:bob.md``, as ids travel in URL paths): relative to the root, never
absolute; an item's ``source`` is its label as agents see it (``peers/bob.md``).

Writes are atomic (a temporary file in the same folder, fsync, then
``os.replace``, or ``os.link`` for a new file so a file created meanwhile is never clobbered)
and compare before they write: the file must still hold what memadmin read, else ``Conflict``.
A file that is not UTF-8, or larger than ``MAX_FILE_BYTES``, is listed (its subject still
found from its head) and may be deleted or erased, but is never rewritten.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from memadmin.providers import contract as c
from memadmin.providers.governed import (
    GovernedProvider,
    StoredItem,
    bounded_call,
    left,
    parse_label,
)
from memadmin.workspaces.models import Namespace

#: Files larger than this are listed but not read whole (a 50 MB "memory" is not memory).
MAX_FILE_BYTES = 1024 * 1024
#: How much of a file is read for its front matter or marker line when it is too large.
HEAD_BYTES = 64 * 1024
SUBJECT_KEY = "data_subject_id"
_KEYED_TIERS = ("daily", "peers", "facts")
_FOLDER = re.compile(r"[A-Za-z0-9_-]{1,128}(/[A-Za-z0-9_-]{1,128}){0,3}")
def to_ref(path: str) -> str:
    """An item id from a root-relative path: ``support-bot/peers/bob.md`` is
    ``support-bot:peers:bob.md`` (ids travel in URL paths, where a slash cannot; neither
    folders nor labels may hold a colon, so it reads back unambiguously)."""
    return path.replace("/", ":")


def split_front_matter(text: str) -> tuple[list[str], str]:
    """(front matter lines, body). Front matter is a first line ``---``, ``key: value`` lines,
    and a closing ``---`` line; anything else is all body."""
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return [], text
    lines = text.split("\n")
    for index in range(1, min(len(lines), 200)):
        if lines[index].rstrip("\r") == "---":
            return [line.rstrip("\r") for line in lines[1:index]], "\n".join(lines[index + 1:])
    return [], text


def front_matter_value(lines: list[str], key: str) -> str | None:
    for line in lines:
        name, sep, value = line.partition(":")
        if sep and name.strip() == key:
            value = value.strip().strip("\"'")
            return value or None
    return None


def with_front_matter(lines: list[str], body: str, subject: str | None) -> str:
    kept = [line for line in lines if line.partition(":")[0].strip() != SUBJECT_KEY]
    if subject is not None:
        kept.append(f"{SUBJECT_KEY}: {subject}")
    if not kept:
        return body
    return "---\n" + "\n".join(kept) + "\n---\n" + body


class MarkdownProvider(GovernedProvider):
    kind = "markdown"
    # Everything: the folder is memadmin's to read and write like an agent's.
    operations = c.OPERATIONS

    # -- configuration --------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        root = self.settings.options.get("root") if self.settings.options else None
        if not isinstance(root, str) or not root:
            raise c.Unavailable("this Markdown provider has no folder configured")
        return Path(root)

    def _folder(self, namespace: Namespace) -> str:
        folders = self.settings.options.get("folders") or {}
        folder = folders.get(namespace.slug, namespace.slug) if isinstance(folders, dict) \
            else namespace.slug
        if not isinstance(folder, str) or not _FOLDER.fullmatch(folder):
            raise c.Unavailable(f"the folder configured for namespace {namespace.slug} is not "
                                "a relative folder name")
        return folder

    def _path(self, namespace: Namespace, label: str) -> Path:
        return self.root / self._folder(namespace) / label

    def _subject_of(self, front: list[str], body: str) -> str | None:
        subject = front_matter_value(front, SUBJECT_KEY)
        if subject is not None:
            return subject[: c.MAX_SUBJECT_ID_CHARS]
        marker = self.settings.options.get("subject_marker")
        if isinstance(marker, str) and marker:
            for line in body.split("\n", 200)[:200]:
                if line.startswith(marker):
                    value = line[len(marker):].strip()
                    return value[: c.MAX_SUBJECT_ID_CHARS] or None
        return None

    # -- reading --------------------------------------------------------------------------------

    def _load(self, namespace: Namespace, label: str, tier: str, key: str
              ) -> tuple[StoredItem, bytes] | None:
        """The item and the file's raw bytes (for compare-before-write), or None if absent."""
        path = self._path(namespace, label)
        try:
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode):
                return None  # a symlink or folder in a tier's place is not memory
            with path.open("rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return None
        except PermissionError:
            raise c.Unavailable(f"permission denied reading {self._folder(namespace)}/{label}") \
                from None
        except OSError as exc:
            raise c.Unavailable(f"cannot read {self._folder(namespace)}/{label}: "
                                f"{exc.strerror or type(exc).__name__}") from None
        error: type[c.ProviderError] = c.InvalidRequest
        problem, size = None, None
        if len(raw) > MAX_FILE_BYTES:
            problem, error, size = (f"the file is {info.st_size:,} bytes; memadmin reads at most "
                                    f"{MAX_FILE_BYTES:,}"), c.TooLarge, info.st_size
            text = raw[:HEAD_BYTES].decode("utf-8", errors="replace")
        else:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                problem = "the file is not valid UTF-8"
                text = raw.decode("utf-8", errors="replace")
        front, body = split_front_matter(text)
        subject = self._subject_of(front, body)
        if size is not None:
            body = ""
        elif problem is None and "\x00" in body:
            problem = "the file holds NUL bytes"
        updated = dt.datetime.fromtimestamp(info.st_mtime_ns / 1e9, tz=dt.UTC)
        item = StoredItem(
            ref=to_ref(f"{self._folder(namespace)}/{label}"), partition=namespace.partition_key,
            tier=tier, key=key, content=body, subject=subject, updated_at=updated,
            order=info.st_mtime_ns, problem=problem, problem_error=error, size=size,
        )
        return item, raw

    def _labels(self, namespace: Namespace, end: float) -> Iterator[tuple[str, str, str]]:
        folder = self.root / self._folder(namespace)
        for tier in sorted(c.DOCUMENT_TIERS):
            yield f"{tier}.md", tier, ""
        for tier in _KEYED_TIERS:
            try:
                names = sorted(os.listdir(folder / tier))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except PermissionError:
                raise c.Unavailable(f"permission denied listing {self._folder(namespace)}/"
                                    f"{tier}") from None
            for name in names:
                left(end)
                parsed = parse_label(f"{tier}/{name}")
                if parsed is not None and parsed[0] == tier:
                    yield f"{tier}/{name}", parsed[0], parsed[1]

    def _items(self, namespace: Namespace, end: float) -> Iterator[StoredItem]:
        if not self.root.is_dir():
            raise c.Unavailable("the memory folder does not exist")
        for label, tier, key in self._labels(namespace, end):
            loaded = self._load(namespace, label, tier, key)
            if loaded is not None:
                yield loaded[0]

    def _label_of(self, namespace: Namespace, ref: str) -> tuple[str, str, str] | None:
        if "/" in ref:
            return None
        ref = ref.replace(":", "/")
        prefix = self._folder(namespace) + "/"
        if not ref.startswith(prefix):
            return None
        label = ref[len(prefix):]
        parsed = parse_label(label)
        if parsed is None or c.source_label(*parsed) != label:
            return None
        return label, parsed[0], parsed[1]

    def _read(self, namespace: Namespace, ref: str, end: float) -> StoredItem | None:
        found = self._label_of(namespace, ref)
        if found is None:
            return None
        loaded = self._load(namespace, *found)
        return loaded[0] if loaded is not None else None

    def _ref(self, namespace: Namespace, tier: str, key: str) -> str | None:
        return to_ref(f"{self._folder(namespace)}/{c.source_label(tier, key)}")

    # -- writing --------------------------------------------------------------------------------

    def _write(self, namespace: Namespace, tier: str, key: str, content: str,
               subject: str | None, current: StoredItem | None, end: float) -> StoredItem:
        label = c.source_label(tier, key)
        path = self._path(namespace, label)
        front: list[str] = []
        if current is not None:
            loaded = self._load(namespace, label, tier, key)
            if loaded is None or loaded[0].digest != current.digest:
                raise c.Conflict(f"{label} changed or disappeared since memadmin read it")
            front, _ = split_front_matter(loaded[1].decode("utf-8"))
            expected_raw: bytes | None = loaded[1]
        else:
            expected_raw = None
        if subject is not None and front_matter_value(front, SUBJECT_KEY) is None and \
                self._subject_of([], content) == subject:
            subject = None  # named by the file's own marker line: nothing to add
        data = with_front_matter(front, content, subject).encode("utf-8")
        temp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with temp.open("xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            # A fine-grained mtime: the kernel's is coarse (a few ms), and listings order by it.
            now = time.time_ns()
            os.utime(temp, ns=(now, now))
            left(end)
            if expected_raw is None:
                try:
                    os.link(temp, path)  # fails if someone created the file meanwhile
                except FileExistsError:
                    raise c.Conflict(f"{label} was created by someone else meanwhile") from None
            else:
                if hashlib.sha256(path.read_bytes()).digest() != \
                        hashlib.sha256(expected_raw).digest():
                    raise c.Conflict(f"{label} changed since memadmin read it")
                os.replace(temp, path)
        except PermissionError:
            raise c.Unavailable(f"permission denied writing {self._folder(namespace)}/{label}") \
                from None
        except OSError as exc:
            raise c.Unavailable(f"cannot write {self._folder(namespace)}/{label}: "
                                f"{exc.strerror or type(exc).__name__}") from None
        finally:
            temp.unlink(missing_ok=True)
        loaded = self._load(namespace, label, tier, key)
        if loaded is None:
            raise c.Conflict(f"{label} disappeared right after memadmin wrote it")
        return loaded[0]

    def _remove(self, namespace: Namespace, item: StoredItem, end: float) -> bool:
        found = self._label_of(namespace, item.ref)
        if found is None:
            return False
        path = self._path(namespace, found[0])
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except PermissionError:
            raise c.Unavailable(f"permission denied deleting {item.ref}") from None
        except OSError as exc:
            raise c.Unavailable(f"cannot delete {item.ref}: "
                                f"{exc.strerror or type(exc).__name__}") from None
        return True

    # -- health ---------------------------------------------------------------------------------

    def _probe(self, end: float) -> None:
        root = self.root
        try:
            info = root.stat()
        except FileNotFoundError:
            raise c.Unavailable("the memory folder does not exist") from None
        except PermissionError:
            raise c.Unavailable("permission denied on the memory folder") from None
        if not stat.S_ISDIR(info.st_mode):
            raise c.Unavailable("the configured path is not a folder")
        if not os.access(root, os.R_OK | os.X_OK):
            raise c.Unavailable("the memory folder is not readable")
        if not os.access(root, os.W_OK):
            raise c.Unavailable("the memory folder is read-only for memadmin")

    def discover(self, *, deadline: float) -> list[str]:
        """Sub-folders of the root that look like an agent's or crew's memory (adoption)."""
        def scan() -> list[str]:
            found = []
            for entry in sorted(os.scandir(self.root), key=lambda e: e.name)[:500]:
                if entry.is_dir(follow_symlinks=False) and _FOLDER.fullmatch(entry.name):
                    found.append(entry.name)
            return found

        try:
            return list(bounded_call(scan, deadline))
        except OSError:
            raise c.Unavailable("the memory folder cannot be listed") from None
