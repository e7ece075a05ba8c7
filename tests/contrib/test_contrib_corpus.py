"""``tools/contrib_corpus.py`` counts the contrib names a TF1 file uses, however it
reaches them, and says where ``dataflow.contrib`` finds each one."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import subprocess

import pytest

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "contrib_corpus.py"


@pytest.fixture(scope="module")
def corpus():
    spec = importlib.util.spec_from_file_location("contrib_corpus", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAM = """
import tensorflow as tf
from tensorflow.contrib import rnn
from tensorflow.contrib.layers import fully_connected as fc
import tensorflow.contrib.slim as slim
# tf.contrib.layers.flatten in a comment is not a use
w = tf.get_variable("w", [2, 2], initializer=tf.contrib.layers.xavier_initializer())
cell = rnn.BasicLSTMCell(4)
h = fc(x, 3)
h = fc(h, 2)
net = slim.conv2d(images, 8, 3)
"""


def test_counts_each_way_of_reaching_a_contrib_name(corpus):
    assert dict(corpus.uses_in(PROGRAM)) == {
        "contrib.layers.xavier_initializer": 1,
        "contrib.rnn.BasicLSTMCell": 1,
        "contrib.layers.fully_connected": 2,
        "contrib.slim.conv2d": 1,
    }


def test_notebook_cells_and_the_table(corpus, tmp_path, capsys):
    cells = [
        {"cell_type": "code", "source": PROGRAM.splitlines(True)},
        {"cell_type": "markdown", "source": ["tf.contrib.layers.flatten"]},
    ]
    (tmp_path / "a.ipynb").write_text(json.dumps({"cells": cells}))
    (tmp_path / "b.py").write_text(
        "tf.contrib.eager.enable_eager_execution()\ntf.contrib.layers.flatten(x)\n"
    )
    (tmp_path / "c.py").write_text("y = tf.contrib.keras.layers.Dense(3)(x)\n")
    corpus.main([str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3 files (1 eager left out), 2 use tf.contrib, 6 uses"
    assert out[1].split()[2:] == [
        "contrib.layers.fully_connected",
        "dataflow.contrib.layers.core.fully_connected",
    ]
    assert "contrib.keras.layers.Dense  -" in "\n".join(out)
    assert out[-1] == "dataflow.contrib covers 5 of 6 uses"


def test_import_lines_are_not_uses_and_chains_resolve(corpus):
    program = (
        "import tensorflow as tf\n"
        "import tensorflow.contrib as tc\n"
        "from tensorflow.contrib import learn\n"
        "from tensorflow.contrib.tensorboard.plugins import projector\n"
        "h = tc.layers.layer_norm(x)\n"
        "vp = learn.preprocessing.VocabularyProcessor(10)\n"
        "config = projector.ProjectorConfig()\n"
        "projector.visualize_embeddings(writer, config)\n"
    )
    assert dict(corpus.uses_in(program)) == {
        "contrib.layers.layer_norm": 1,
        "contrib.learn.preprocessing.VocabularyProcessor": 1,
        "contrib.tensorboard.plugins.projector": 2,
    }


def _pinned_corpus(corpus, mirror, repo):
    """A one-repository corpus pinned from ``mirror``, as --add pins one."""
    pinned, _ = corpus.rebuild({"rule": "test", "repositories": [], "files": []}, mirror, [repo])
    return pinned


FILES = {
    "a.py": "import tensorflow as tf\nw = tf.contrib.layers.xavier_initializer()\n",
    "sub/b.py": "x = 1\n",
    "c.ipynb": json.dumps(
        {
            "cells": [
                {"cell_type": "code", "source": ["tf.contrib.eager.enable_eager_execution()\n"]}
            ]
        }
    ),
}


def test_rebuild_from_a_plain_tree_checks_the_blob_hashes(corpus, tmp_path):
    root = tmp_path / "mirror" / "someone+repo"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    pinned = _pinned_corpus(corpus, tmp_path / "mirror", "someone/repo")
    assert pinned["repositories"] == [
        {"repo": "someone/repo", "commit": None, "files": 3, "absent": []}
    ]
    a, c = pinned["files"]
    assert (a["path"], a["uses"]) == ("a.py", {"contrib.layers.xavier_initializer": 1})
    assert (
        a["blob"]
        == subprocess.run(
            ["git", "hash-object", str(root / "a.py")], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    assert c["eager"] is True and c["path"] == "c.ipynb"
    assert corpus.pinned_totals(pinned) == {"contrib.layers.xavier_initializer": 1}
    assert corpus.rebuild(pinned, tmp_path / "mirror", [])[1] == []
    (root / "a.py").write_text(FILES["a.py"] + "tf.contrib.layers.flatten(x)\n")
    again, diffs = corpus.rebuild(pinned, tmp_path / "mirror", [])
    assert [d.split(": now")[0] for d in diffs] == ["someone/repo:a.py"]
    assert corpus.pinned_totals(again)["contrib.layers.flatten"] == 1


def test_rebuild_from_a_git_snapshot_at_the_pinned_commit(corpus, tmp_path):
    work = tmp_path / "mirror" / "someone+repo" / "repo"
    for name, text in FILES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)

    def git(*args):
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
        env |= {"GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ["PATH"], "HOME": str(tmp_path)}
        done = subprocess.run(["git", "-C", str(work), *args], capture_output=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.decode().strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    first = git("rev-parse", "HEAD")
    (work / "a.py").write_text("y = 2\n")
    git("commit", "-q", "-am", "two")
    plain = _pinned_corpus(corpus, tmp_path / "mirror", "someone/repo")
    assert plain["repositories"][0]["commit"] == git("rev-parse", "HEAD")
    assert [f["path"] for f in plain["files"]] == ["c.ipynb"]
    pinned = dict(plain, repositories=[dict(plain["repositories"][0], commit=first)])
    at_first, diffs = corpus.rebuild(pinned, tmp_path / "mirror", [])
    assert diffs == [
        f"someone/repo:a.py: now {at_first['files'][0]['blob']} "
        "{'contrib.layers.xavier_initializer': 1}"
    ]
    assert at_first["repositories"][0]["commit"] == first


def test_pinned_corpus_is_well_formed(corpus):
    pinned = corpus.load_pinned()
    repos = {r["repo"]: r for r in pinned["repositories"]}
    assert len(repos) == len(pinned["repositories"]) >= 26
    assert all(len(r["commit"]) == 40 and r["files"] > 0 for r in repos.values())
    seen = set()
    for entry in pinned["files"]:
        assert entry["repo"] in repos and (entry["repo"], entry["path"]) not in seen
        seen.add((entry["repo"], entry["path"]))
        assert len(entry["blob"]) == 40 and entry["path"].endswith((".py", ".ipynb"))
        assert entry["uses"] and all(n > 0 for n in entry["uses"].values())
        assert all(name.startswith("contrib.") for name in entry["uses"])
    graph_mode = [f for f in pinned["files"] if not f.get("eager")]
    assert len(graph_mode) >= 30


def test_pinned_coverage_holds_at_90_percent(corpus):
    total = corpus.pinned_totals(corpus.load_pinned())
    missing = {name: n for name, n in total.items() if corpus.maps_to(name) == "-"}
    uses = sum(total.values())
    covered = uses - sum(missing.values())
    assert covered >= 0.9 * uses, (covered, uses, sorted(missing.items(), key=lambda kv: -kv[1]))


API = TOOL.parents[1] / "docs" / "api.md"


def test_docs_table_is_the_pinned_counts(corpus):
    """docs/api.md's contrib table lists every counted name with its pinned count; the
    names it says are provided resolve in dataflow.contrib, the others do not; and its
    coverage sentence is the pinned one."""
    text = API.read_text()
    section = text[text.index("### `tf.contrib`") :]
    section = section[: section.index("\n### ", 1)]
    rows = re.findall(r"^\| `(contrib\.[\w.]+)` \| (\d+) \| (.*) \|$", section, re.M)
    total = corpus.pinned_totals(corpus.load_pinned())
    assert {name: int(n) for name, n, _ in rows} == dict(total)
    for name, _, maps in rows:
        provided = corpus.maps_to(name) != "-"
        assert provided != maps.startswith("not provided"), (name, maps)
    uses = sum(total.values())
    covered = sum(n for name, n in total.items() if corpus.maps_to(name) != "-")
    assert f"covers {covered} of the {uses} uses ({100 * covered / uses:.1f}%)" in section
