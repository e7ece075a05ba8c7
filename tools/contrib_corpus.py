"""Count the ``tf.contrib`` names a corpus of TF1 programs uses, and how many of those
uses ``dataflow.contrib`` covers.

Three ways to run it:

* ``python tools/contrib_corpus.py DIR [DIR ...]``: count the ``.py`` files and the code
  cells of ``.ipynb`` notebooks under local folders (offline).
* ``python tools/contrib_corpus.py --pinned [JSON]``: the pinned corpus,
  ``tools/contrib_corpus.json`` by default, from its committed per-file counts (offline;
  ``tests/contrib/test_contrib_corpus.py`` holds the coverage to it).
* ``python tools/contrib_corpus.py --rebuild MIRROR [--write] [--add OWNER/NAME ...]``:
  count the pinned corpus again from the files themselves. ``MIRROR`` holds one folder
  per repository, ``owner+name`` (the layout of the repository snapshots the ``fetch``
  tool brings to ``/work/.mirror``): a git directory (``owner+name/repo`` or
  ``owner+name/repo/.git``), read at the pinned commit, or a plain tree of files, each
  checked against its pinned git blob hash. It prints every file whose hash or counts
  differ from the pinned ones; ``--write`` writes the new counts (``--add`` pins more
  repositories at their snapshot's newest commit).

Each use is a ``contrib.<module>.<name>`` reached one of four ways, resolved per file:

* a dotted use, ``tf.contrib.layers.flatten(...)`` (whatever ``tensorflow`` is called);
* through a module alias, ``rnn = tf.contrib.rnn`` / ``from tensorflow.contrib import rnn``
  / ``import tensorflow.contrib.slim as slim``, then ``rnn.GRUCell(...)``;
* a name imported from a contrib module, ``from tensorflow.contrib.rnn import GRUCell``,
  then each later ``GRUCell`` in the file;
* a name bound to a contrib name, ``xavier = tf.contrib.layers.xavier_initializer``: one
  use (the binding), since later calls are calls of the same name.

The table printed is ``count  share  contrib.<module>.<name>  maps to`` sorted by count
(``share`` is the cumulative share of all uses; ``maps to`` is where
``dataflow.contrib`` finds the name, or ``-`` where it raises ``NotProvidedError``),
then how many uses ``dataflow.contrib`` covers. Files that turn on eager execution
(``enable_eager_execution``, ``tf.contrib.eager``) are left out unless ``--eager``:
dataflow runs graph-mode programs only (the pinned corpus keeps them, marked ``eager``).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator

PINNED = pathlib.Path(__file__).resolve().with_suffix(".json")
SUFFIXES = (".py", ".ipynb")

_DOTTED = re.compile(r"\b(?:tf|tensorflow)\.contrib\.(\w+)\.(\w+(?:\.\w+)*)")
_MODULE_ALIAS = re.compile(r"^\s*(\w+)\s*=\s*(?:tf|tensorflow)\.contrib\.(\w+)\s*$", re.M)
_FROM_CONTRIB = re.compile(r"^\s*from\s+tensorflow\.contrib\s+import\s+([^\n#]+)", re.M)
_IMPORT_AS = re.compile(r"^\s*import\s+tensorflow\.contrib\.(\w+)\s+as\s+(\w+)", re.M)
_IMPORT_CONTRIB = re.compile(r"^\s*import\s+tensorflow\.contrib\s+as\s+(\w+)", re.M)
_IMPORT_LINE = re.compile(r"^\s*(?:from|import)\s+tensorflow\.contrib\b[^\n]*", re.M)
_EAGER = re.compile(r"enable_eager_execution|contrib\.eager|tensorflow\.contrib import eager")
_FROM_MODULE = re.compile(r"^\s*from\s+tensorflow\.contrib\.([\w.]+)\s+import\s+([^\n#]+)", re.M)
_CHAIN = r"(\w+(?:\.\w+)*)"


def source_text(text: str, notebook: bool) -> str:
    """The Python source of a file's text: itself, or a notebook's code cells joined."""
    if not notebook:
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except (json.JSONDecodeError, AttributeError):
        return ""
    return "\n".join("".join(c.get("source", [])) for c in cells if c.get("cell_type") == "code")


def source_of(path: pathlib.Path) -> str:
    """The Python source of a ``.py`` file, or a notebook's code cells joined."""
    return source_text(path.read_text(errors="replace"), path.suffix == ".ipynb")


def _imported(names: str) -> list[tuple[str, str]]:
    """``a, b as c`` -> [("a", "a"), ("b", "c")]."""
    out = []
    for part in names.strip().strip("()\\").split(","):
        words = part.split()
        if words:
            out.append((words[0], words[-1]))
    return out


def uses_in(source: str) -> collections.Counter[str]:
    """``contrib.<module>.<name>`` -> number of uses in one file's source."""
    found: collections.Counter[str] = collections.Counter()
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith("#")]
    code = "\n".join(lines)
    body = _IMPORT_LINE.sub("", code)  # an import is not a use; its names' uses are
    for module, name in _DOTTED.findall(body):
        found[f"contrib.{module}.{name}"] += 1
    aliases = {a: f"contrib.{m}" for a, m in _MODULE_ALIAS.findall(code)}
    for names in _FROM_CONTRIB.findall(code):
        aliases.update((alias, f"contrib.{module}") for module, alias in _imported(names))
    aliases.update((a, f"contrib.{m}") for m, a in _IMPORT_AS.findall(code))
    aliases.update((a, "contrib") for a in _IMPORT_CONTRIB.findall(code))
    for alias, module in aliases.items():
        for name in re.findall(rf"(?<![\w.]){re.escape(alias)}\.{_CHAIN}", body):
            if module != "contrib" or "." in name:
                found[f"{module}.{name}"] += 1
    for module, names in _FROM_MODULE.findall(code):
        for name, alias in _imported(names):
            n = len(re.findall(rf"(?<![\w.]){re.escape(alias)}\b", body))
            found[f"contrib.{module}.{name}"] += max(n, 1)
    return found


def is_eager(source: str) -> bool:
    """Whether a program turns on eager execution (dataflow runs graph mode only)."""
    return bool(_EAGER.search(source))


def maps_to(name: str) -> str:
    """Where ``dataflow`` finds ``contrib.<module>.<name>``: the defining module and
    name of the object, or ``-`` if it does not provide it."""
    import dataflow

    target: object = dataflow
    try:
        for part in name.split("."):
            target = getattr(target, part)
    except AttributeError:
        return "-"
    module = getattr(target, "__module__", None) or getattr(type(target), "__module__", "")
    qualname = getattr(target, "__qualname__", None) or getattr(type(target), "__qualname__", "")
    return f"{module}.{qualname}" if not isinstance(target, str) else repr(target)


def print_table(total: collections.Counter[str]) -> tuple[int, int]:
    """Print the per-name table and the covered line; return (covered, all uses)."""
    all_uses = sum(total.values())
    running = covered = 0
    for name, count in sorted(total.items(), key=lambda item: (-item[1], item[0])):
        running += count
        target = maps_to(name)
        covered += count if target != "-" else 0
        print(f"{count:5d}  {100 * running / max(all_uses, 1):5.1f}%  {name}  {target}")
    print(f"dataflow.contrib covers {covered} of {all_uses} uses")
    return covered, all_uses


# --- the pinned corpus -----------------------------------------------------------------


def load_pinned(path: pathlib.Path = PINNED) -> dict:
    """The pinned corpus: its rule, repositories (commit, files read, files absent from
    the snapshot) and, per file that uses ``tf.contrib``, its blob hash and counts."""
    return json.loads(path.read_text())


def pinned_totals(pinned: dict, eager: bool = False) -> collections.Counter[str]:
    """``contrib.<module>.<name>`` -> uses over the pinned files (eager ones left out
    unless ``eager``)."""
    total: collections.Counter[str] = collections.Counter()
    for entry in pinned["files"]:
        if eager or not entry.get("eager", False):
            total.update(entry["uses"])
    return total


def blob_hash(data: bytes) -> str:
    """Git's blob hash of a file's bytes (what ``git ls-tree`` lists)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _git(git_dir: pathlib.Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], input=stdin, capture_output=True, check=True
    ).stdout


def git_files(git_dir: pathlib.Path, commit: str) -> Iterator[tuple[str, str, bytes | None]]:
    """``(path, blob hash, bytes or None where the snapshot lacks the blob)`` of every
    ``.py``/``.ipynb`` file of ``commit``."""
    listing = []
    for row in _git(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        if not row:
            continue
        meta, path = row.split(b"\t", 1)
        _, kind, blob = meta.split()
        name = path.decode(errors="replace")
        if kind == b"blob" and name.endswith(SUFFIXES):
            listing.append((name, blob.decode()))
    batch = _git(
        git_dir, "cat-file", "--batch", stdin="".join(f"{b}\n" for _, b in listing).encode()
    )
    at = 0
    for name, blob in listing:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        if header[-1] == b"missing":
            at = end + 1
            yield name, blob, None
            continue
        size = int(header[2])
        yield name, blob, batch[end + 1 : end + 1 + size]
        at = end + 2 + size


def tree_files(root: pathlib.Path) -> Iterator[tuple[str, str, bytes | None]]:
    """The same for a plain folder of files (hashes computed from the bytes)."""
    for path in sorted(root.rglob("*")):
        if path.suffix in SUFFIXES and path.is_file():
            data = path.read_bytes()
            yield path.relative_to(root).as_posix(), blob_hash(data), data


def snapshot_of(mirror: pathlib.Path, repo: str) -> pathlib.Path:
    """The folder of ``owner/name`` in a mirror: its git directory, or a plain tree."""
    base = mirror / repo.replace("/", "+")
    for candidate in (base / "repo" / ".git", base / "repo", base / ".git"):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return base / "repo" if (base / "repo").is_dir() else base


def measure_repository(
    mirror: pathlib.Path, repo: str, commit: str | None
) -> tuple[dict, list[dict]]:
    """Count one repository of the mirror: its ``repositories`` entry (commit, files
    read, files absent) and its ``files`` entries (those that use ``tf.contrib``)."""
    where = snapshot_of(mirror, repo)
    if not where.is_dir():
        raise FileNotFoundError(f"{repo}: no snapshot under {mirror}")
    if (where / "objects").is_dir():
        commit = commit or _git(where, "rev-parse", "HEAD").decode().strip()
        files: Iterable[tuple[str, str, bytes | None]] = git_files(where, commit)
    else:
        files = tree_files(where)
    absent, used, count = [], [], 0
    for path, blob, data in files:
        count += 1
        if data is None:
            absent.append(path)
            continue
        source = source_text(data.decode(errors="replace"), path.endswith(".ipynb"))
        found = uses_in(source)
        if found:
            entry = {"repo": repo, "path": path, "blob": blob}
            if is_eager(source):
                entry["eager"] = True
            entry["uses"] = dict(sorted(found.items()))
            used.append(entry)
    return {"repo": repo, "commit": commit, "files": count, "absent": absent}, used


def rebuild(pinned: dict, mirror: pathlib.Path, add: list[str]) -> tuple[dict, list[str]]:
    """Count the pinned repositories (and ``add``) again; the new corpus and the
    differences from the pinned one, one line each."""
    repos = [(r["repo"], r["commit"]) for r in pinned["repositories"]]
    repos += [(name, None) for name in add if name not in {r for r, _ in repos}]
    old = {(f["repo"], f["path"]): f for f in pinned["files"]}
    new_repos, new_files, diffs = [], [], []
    for repo, commit in repos:
        entry, files = measure_repository(mirror, repo, commit)
        new_repos.append(entry)
        new_files.extend(files)
        before = next((r for r in pinned["repositories"] if r["repo"] == repo), None)
        if before is not None and entry["commit"] is None:
            entry["commit"] = before["commit"]
        if before is not None and (entry["files"], entry["absent"]) != (
            before["files"],
            before["absent"],
        ):
            diffs.append(f"{repo}: {entry['files']} files read, {len(entry['absent'])} absent")
    for f in new_files:
        was = old.pop((f["repo"], f["path"]), None)
        if was != f:
            diffs.append(f"{f['repo']}:{f['path']}: now {f.get('blob')} {f['uses']}")
    diffs += [f"{repo}:{path}: no longer uses tf.contrib" for repo, path in old]
    out = {k: v for k, v in pinned.items() if k not in ("repositories", "files")}
    out["repositories"] = new_repos
    out["files"] = new_files
    return out, diffs


def write_pinned(pinned: dict, path: pathlib.Path = PINNED) -> None:
    """Write the corpus: one line per repository and per file, so diffs stay readable."""
    head = {k: v for k, v in pinned.items() if k not in ("repositories", "files")}
    lines = [json.dumps(head, indent=1)[:-2] + ","]
    for key in ("repositories", "files"):
        rows = [" " + json.dumps(row, sort_keys=False) for row in pinned[key]]
        lines.append(
            f' "{key}": [\n' + ",\n".join(rows) + "\n ]" + ("," if key == "repositories" else "")
        )
    path.write_text("\n".join(lines) + "\n}\n")


def summary_line(pinned: dict) -> str:
    """``N files (E eager left out, A absent from the snapshots), U use tf.contrib``."""
    files = sum(r["files"] for r in pinned["repositories"])
    absent = sum(len(r["absent"]) for r in pinned["repositories"])
    eager = sum(1 for f in pinned["files"] if f.get("eager"))
    using = len(pinned["files"]) - eager
    uses = sum(pinned_totals(pinned).values())
    return (
        f"{len(pinned['repositories'])} repositories, {files} files ({absent} absent from the"
        f" snapshots, {eager} eager using tf.contrib left out), {using} use tf.contrib,"
        f" {uses} uses"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=pathlib.Path, help="local folders to count")
    parser.add_argument("--eager", action="store_true", help="count eager programs too")
    parser.add_argument("--pinned", nargs="?", const=PINNED, type=pathlib.Path)
    parser.add_argument("--rebuild", type=pathlib.Path, metavar="MIRROR")
    parser.add_argument("--write", action="store_true", help="with --rebuild: save it")
    parser.add_argument("--add", nargs="*", default=[], metavar="OWNER/NAME")
    args = parser.parse_args(argv)
    if str(PINNED.parent.parent) not in sys.path:
        sys.path.insert(0, str(PINNED.parent.parent))  # dataflow from this checkout
    if args.rebuild is not None:
        path = args.pinned or PINNED
        pinned, diffs = rebuild(load_pinned(path), args.rebuild, args.add)
        print("\n".join(diffs) or "the files and counts are the pinned ones")
        if args.write:
            write_pinned(pinned, path)
        print(summary_line(pinned))
        print_table(pinned_totals(pinned, args.eager))
        return 1 if diffs and not args.write else 0
    if args.pinned is not None:
        pinned = load_pinned(args.pinned)
        print(summary_line(pinned))
        print_table(pinned_totals(pinned, args.eager))
        return 0
    if not args.dirs:
        parser.error("give folders to count, --pinned or --rebuild MIRROR")
    files = sorted(
        p for d in args.dirs for p in d.rglob("*") if p.suffix in SUFFIXES and p.is_file()
    )
    total: collections.Counter[str] = collections.Counter()
    using = 0
    eager = 0
    for path in files:
        source = source_of(path)
        if not args.eager and is_eager(source):
            eager += 1
            continue
        found = uses_in(source)
        using += bool(found)
        total.update(found)
    print(f"{len(files)} files ({eager} eager left out), {using} use tf.contrib,", end=" ")
    print(f"{sum(total.values())} uses")
    print_table(total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
