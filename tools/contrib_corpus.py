"""Count the ``tf.contrib`` names a corpus of TF1 programs uses.

Usage: ``python tools/contrib_corpus.py DIR [DIR ...]`` over local checkouts of TF1
repositories (``.py`` files and the code cells of ``.ipynb`` notebooks). It runs offline:
it reads only the files under the given folders.

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
dataflow runs graph-mode programs only.
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import re

_DOTTED = re.compile(r"\b(?:tf|tensorflow)\.contrib\.(\w+)\.(\w+(?:\.\w+)*)")
_MODULE_ALIAS = re.compile(r"^\s*(\w+)\s*=\s*(?:tf|tensorflow)\.contrib\.(\w+)\s*$", re.M)
_FROM_CONTRIB = re.compile(r"^\s*from\s+tensorflow\.contrib\s+import\s+([^\n#]+)", re.M)
_IMPORT_AS = re.compile(r"^\s*import\s+tensorflow\.contrib\.(\w+)\s+as\s+(\w+)", re.M)
_EAGER = re.compile(r"enable_eager_execution|contrib\.eager|tensorflow\.contrib import eager")
_FROM_MODULE = re.compile(
    r"^\s*from\s+tensorflow\.contrib\.(\w+)(?:\.[\w.]+)?\s+import\s+([^\n#]+)", re.M
)


def source_of(path: pathlib.Path) -> str:
    """The Python source of a ``.py`` file, or a notebook's code cells joined."""
    text = path.read_text(errors="replace")
    if path.suffix != ".ipynb":
        return text
    try:
        cells = json.loads(text).get("cells", [])
    except json.JSONDecodeError:
        return ""
    return "\n".join("".join(c.get("source", [])) for c in cells if c.get("cell_type") == "code")


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
    for module, name in _DOTTED.findall(code):
        found[f"contrib.{module}.{name}"] += 1
    aliases = dict((a, m) for a, m in _MODULE_ALIAS.findall(code))
    for names in _FROM_CONTRIB.findall(code):
        aliases.update((alias, module) for module, alias in _imported(names))
    aliases.update((a, m) for m, a in _IMPORT_AS.findall(code))
    for alias, module in aliases.items():
        for name in re.findall(rf"(?<![\w.]){re.escape(alias)}\.(\w+)", code):
            found[f"contrib.{module}.{name}"] += 1
    body = re.sub(_FROM_MODULE, "", code)
    for module, names in _FROM_MODULE.findall(code):
        for name, alias in _imported(names):
            n = len(re.findall(rf"(?<![\w.]){re.escape(alias)}\b", body))
            found[f"contrib.{module}.{name}"] += max(n, 1)
    return found


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=pathlib.Path)
    parser.add_argument("--eager", action="store_true", help="count eager programs too")
    args = parser.parse_args(argv)
    files = sorted(
        p for d in args.dirs for p in d.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file()
    )
    total: collections.Counter[str] = collections.Counter()
    using = 0
    eager = 0
    for path in files:
        source = source_of(path)
        if not args.eager and _EAGER.search(source):
            eager += 1
            continue
        found = uses_in(source)
        using += bool(found)
        total.update(found)
    all_uses = sum(total.values())
    print(f"{len(files)} files ({eager} eager left out), {using} use tf.contrib, {all_uses} uses")
    running = covered = 0
    for name, count in total.most_common():
        running += count
        target = maps_to(name)
        covered += count if target != "-" else 0
        print(f"{count:5d}  {100 * running / max(all_uses, 1):5.1f}%  {name}  {target}")
    print(f"dataflow.contrib covers {covered} of {all_uses} uses")


if __name__ == "__main__":
    main()
