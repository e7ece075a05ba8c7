"""``tf.contrib.learn.preprocessing``: ``VocabularyProcessor``, which maps documents to
fixed-length arrays of word ids, as TF 1.15's ``preprocessing/text.py`` does.

Words are found by one regular expression (runs of capitals, capitalised words, and
runs of word characters, apostrophes and hyphens). Ids are given in order of first
appearance while fitting, from 1; id 0 is ``<UNK>``, for unseen words and padding.
With ``min_frequency``, words seen at most that often are dropped and the rest are
renumbered by falling frequency (ties alphabetically).
"""

from __future__ import annotations

import collections
import pickle
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ...gfile import GFile
from ..missing import contrib_hook

TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|[\'\w\-]+", re.UNICODE)


def tokenizer(iterator: Iterable[str]) -> Iterator[list[str]]:
    """The words of each document."""
    for value in iterator:
        yield TOKENIZER_RE.findall(value)


class CategoricalVocabulary:
    """Categories to ids, ``unknown_token`` being 0; ``freeze()`` stops adding new ones."""

    def __init__(self, unknown_token: str = "<UNK>", support_reverse: bool = True):
        self._unknown_token = unknown_token
        self._mapping = {unknown_token: 0}
        self._support_reverse = support_reverse
        self._reverse_mapping = [unknown_token]
        self._freq: Any = collections.defaultdict(int)
        self._freeze = False

    def __len__(self) -> int:
        return len(self._mapping)

    def freeze(self, freeze: bool = True) -> None:
        self._freeze = freeze

    def get(self, category: Any) -> int:
        """The id of ``category``, adding it unless frozen (then 0 if unknown)."""
        if category not in self._mapping:
            if self._freeze:
                return 0
            self._mapping[category] = len(self._mapping)
            self._reverse_mapping.append(category)
        return self._mapping[category]

    def add(self, category: Any, count: int = 1) -> None:
        """Counts ``count`` more occurrences of ``category`` (adding it if new)."""
        if self.get(category) > 0:
            self._freq[category] += count

    def trim(self, min_frequency: int, max_frequency: int = -1) -> None:
        """Keeps the categories seen more than ``min_frequency`` times (and fewer than
        ``max_frequency``, if positive), renumbered by falling frequency."""
        ranked = sorted(
            sorted(self._freq.items(), key=lambda kv: kv[0]), key=lambda kv: kv[1], reverse=True
        )
        self._mapping = {self._unknown_token: 0}
        self._reverse_mapping = [self._unknown_token]
        for category, count in ranked:
            if max_frequency > 0 and count >= max_frequency:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = len(self._mapping)
            self._reverse_mapping.append(category)
        self._freq = {c: n for c, n in ranked if c in self._mapping}

    def reverse(self, class_id: int) -> Any:
        """The category of ``class_id``.

        Raises:
            ValueError: made with ``support_reverse=False``.
        """
        if not self._support_reverse:
            raise ValueError(
                "This vocabulary wasn't initialized with support_reverse to support reverse() "
                "function."
            )
        return self._reverse_mapping[class_id]


class VocabularyProcessor:
    """Documents to ``int64`` arrays of ``max_document_length`` word ids (0-padded)."""

    def __init__(
        self,
        max_document_length: int,
        min_frequency: int = 0,
        vocabulary: CategoricalVocabulary | None = None,
        tokenizer_fn: Callable | None = None,
    ):
        self.max_document_length = max_document_length
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary or CategoricalVocabulary()
        self._tokenizer = tokenizer_fn or tokenizer

    def fit(self, raw_documents: Iterable[str], unused_y: Any = None) -> VocabularyProcessor:
        """Learns the vocabulary of ``raw_documents``, then freezes it."""
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents: Iterable[str], unused_y: Any = None) -> Iterator:
        """``fit``, then ``transform`` (``raw_documents`` is read twice: pass a list)."""
        self.fit(raw_documents)
        return self.transform(raw_documents)

    def transform(self, raw_documents: Iterable[str]) -> Iterator[np.ndarray]:
        """Yields each document's word ids, cut or zero-padded to ``max_document_length``."""
        for tokens in self._tokenizer(raw_documents):
            ids = np.zeros(self.max_document_length, np.int64)
            for i, token in enumerate(tokens[: self.max_document_length]):
                ids[i] = self.vocabulary_.get(token)
            yield ids

    def reverse(self, documents: Iterable) -> Iterator[str]:
        """Yields each array of ids as its words joined by spaces."""
        for item in documents:
            yield " ".join(self.vocabulary_.reverse(i) for i in item)

    def save(self, filename: str) -> None:
        """Pickles this processor to ``filename``."""
        with GFile(filename, "wb") as f:
            f.write(pickle.dumps(self))

    @classmethod
    def restore(cls, filename: str) -> VocabularyProcessor:
        """The processor ``save`` wrote to ``filename`` (a pickle: trusted files only)."""
        with GFile(filename, "rb") as f:
            return pickle.loads(f.read())


__getattr__ = contrib_hook("learn.preprocessing", __name__)
