"""``tf.strings.ngrams`` (dense input), ``unicode_encode`` (dense input) and
``unicode_transcode`` against ``tensorflow.compat.v1``: the same programs built with
both libraries, each run once per module in a session."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

WORDS = np.array([["a", "b", "c", "d"], ["e", "f", "g", "h"]], dtype=object)
CUBE = np.array([[["x", "y", "z"], ["u", "v", "w"]]] * 2, dtype=object)
CODES = np.array([[72, 105, 0x1F600], [97, 0xE9, 99]], np.int32)
BAD_CODES = np.array([[72, -5, 105], [0xD800, 98, 0x110000]], np.int32)
TEXTS = np.array([b"h\xc3\xa9llo", b"ok\x01\x1f", b"bad\xff\xe2\x82x", b""], dtype=object)


def _with_feed(t, value, shape):
    return t.placeholder_with_default(t.constant(value), shape)


PROGRAMS = {
    "ngrams_2": lambda t: t.strings.ngrams(WORDS, 2),
    "ngrams_widths": lambda t: t.strings.ngrams(WORDS, [3, 1, 2], separator="-"),
    "ngrams_pad_pair": lambda t: t.strings.ngrams(
        WORDS, 3, pad_values=("<s>", "</s>"), padding_width=1
    ),
    "ngrams_pad_default": lambda t: t.strings.ngrams(WORDS, 3, pad_values="#"),
    "ngrams_pad_wider": lambda t: t.strings.ngrams(WORDS, 2, pad_values="#", padding_width=3),
    "ngrams_short_kept": lambda t: t.strings.ngrams(WORDS, 5, preserve_short_sequences=True),
    "ngrams_short_padded": lambda t: t.strings.ngrams(
        WORDS, 7, pad_values="#", padding_width=1, preserve_short_sequences=True
    ),
    "ngrams_none": lambda t: t.strings.ngrams(WORDS, 5),
    "ngrams_rank3": lambda t: t.strings.ngrams(CUBE, [1, 2], separator=""),
    "ngrams_vector": lambda t: t.strings.ngrams(["p", "q", "r"], 2),
    "ngrams_unknown_dims": lambda t: t.strings.ngrams(
        _with_feed(t, WORDS, [None, None]), [2, 4], pad_values="_"
    ),
    "ngrams_empty_rows": lambda t: t.strings.ngrams(
        t.zeros([2, 0], t.string), 2, preserve_short_sequences=True
    ),
    "encode_utf8": lambda t: t.strings.unicode_encode(CODES, "UTF-8"),
    "encode_utf16": lambda t: t.strings.unicode_encode(CODES, "UTF-16-BE"),
    "encode_utf32_vector": lambda t: t.strings.unicode_encode(CODES[0], "UTF-32-BE"),
    "encode_rank3": lambda t: t.strings.unicode_encode(np.stack([CODES, CODES[::-1]]), "UTF-8"),
    "encode_replace": lambda t: t.strings.unicode_encode(BAD_CODES, "UTF-8"),
    "encode_replace_char": lambda t: t.strings.unicode_encode(
        BAD_CODES, "UTF-8", replacement_char=ord("?")
    ),
    "encode_ignore": lambda t: t.strings.unicode_encode(BAD_CODES, "UTF-16-BE", errors="ignore"),
    "encode_empty_rows": lambda t: t.strings.unicode_encode(t.zeros([3, 0], t.int32), "UTF-8"),
    "encode_fed": lambda t: t.strings.unicode_encode(_with_feed(t, CODES, [None, None]), "UTF-8"),
    "transcode_utf16": lambda t: t.strings.unicode_transcode(TEXTS, "UTF-8", "UTF-16-BE"),
    "transcode_utf32_ignore": lambda t: t.strings.unicode_transcode(
        TEXTS, "UTF-8", "UTF-32-BE", errors="ignore"
    ),
    "transcode_replace_char": lambda t: t.strings.unicode_transcode(
        TEXTS, "UTF-8", "UTF-8", replacement_char=ord("?")
    ),
    "transcode_controls": lambda t: t.strings.unicode_transcode(
        TEXTS, "UTF-8", "UTF-8", replace_control_characters=True
    ),
    "transcode_from_utf16": lambda t: t.strings.unicode_transcode(
        t.strings.unicode_transcode(TEXTS, "UTF-8", "UTF-16-BE"), "UTF-16-BE", "UTF-8"
    ),
    "transcode_latin1": lambda t: t.strings.unicode_transcode(
        np.array([b"caf\xe9", b"x"], dtype=object), "ISO-8859-1", "UTF-8"
    ),
}


def _run(t):
    with t.Graph().as_default():
        outs = {k: build(t) for k, build in PROGRAMS.items()}
        ranks = {k: o.shape.ndims for k, o in outs.items()}
        with t.Session() as sess:
            return ranks, sess.run(outs)


@pytest.fixture(scope="module")
def results():
    return _run(tf), _run(tf1)


@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_matches_tf(results, case):
    (our_ranks, ours), (their_ranks, theirs) = results
    assert our_ranks[case] == their_ranks[case]
    got, want = np.asarray(ours[case], dtype=object), np.asarray(theirs[case], dtype=object)
    assert got.shape == want.shape
    assert got.tolist() == want.tolist()


def test_strict_errors_fail_the_step_as_in_tf():
    for t in (tf, tf1):
        with t.Graph().as_default():
            bad_text = t.strings.unicode_transcode(TEXTS, "UTF-8", "UTF-8", errors="strict")
            bad_code = t.strings.unicode_encode(BAD_CODES, "UTF-8", errors="strict")
            with t.Session() as sess:
                for fetch in (bad_text, bad_code):
                    with pytest.raises(t.errors.InvalidArgumentError):
                        sess.run(fetch)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda t: t.strings.ngrams(WORDS, 0), ValueError),
        (lambda t: t.strings.ngrams(WORDS, [2, 0]), ValueError),
        (lambda t: t.strings.ngrams(WORDS, 2, padding_width=1), ValueError),
        (lambda t: t.strings.ngrams(WORDS, 2, pad_values="#", padding_width=0), ValueError),
        (lambda t: t.strings.ngrams(WORDS, 2, pad_values=3), TypeError),
        (lambda t: t.strings.ngrams(WORDS, 2, pad_values=("a", 1)), TypeError),
        (lambda t: t.strings.ngrams(t.constant("a"), 2), ValueError),
        (lambda t: t.strings.ngrams(t.placeholder(t.string), 2), ValueError),
        (lambda t: t.strings.unicode_encode(t.placeholder(t.int32), "UTF-8"), ValueError),
    ],
)
def test_build_time_errors_match_tf(call, error):
    for t in (tf, tf1):
        with t.Graph().as_default():
            with pytest.raises(error):
                call(t)
