"""String ops and decoders (``decode_csv``, ``decode_raw``, ``string_to_number``,
``string_split``, ``substr``, ``tf.strings.*``) against ``tensorflow.compat.v1``: values,
dtypes, static shapes and error classes (with TF's messages) on tricky inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dataflow

RECORDS = ['1,"a,b",2.5', ',"",', '3,"x""y",nan', "-4,plain, 1e3 "]

# name -> build(tf) -> a tensor, a list of them or a SparseTensor.
CASES: dict[str, Callable[[Any], Any]] = {
    # decode_csv
    "csv_quotes_empty_nan": lambda tf: tf.decode_csv(RECORDS, [[0], ["dflt"], [0.5]]),
    "csv_all_dtypes": lambda tf: tf.decode_csv(
        ["1,2,3.25,4.5,s"],
        [
            tf.constant([0], tf.int32),
            tf.constant([0], tf.int64),
            tf.constant([0.0], tf.float32),
            tf.constant([0.0], tf.float64),
            [""],
        ],
    ),
    "csv_missing_required": lambda tf: tf.decode_csv(RECORDS, [[0], [""], []]),
    "csv_na_value_delim": lambda tf: tf.decode_csv(
        ["1;2", "NA;3", ";NA"], [[7], [9]], field_delim=";", na_value="NA"
    ),
    "csv_too_many_fields": lambda tf: tf.decode_csv(["1,2,3"], [[0], [0]]),
    "csv_select_cols": lambda tf: tf.decode_csv(['1,2,x"y'], [[0], [0]], select_cols=[0, 1]),
    "csv_select_cols_gap": lambda tf: tf.decode_csv(["1,2,3,4"], [[0], [0]], select_cols=[1, 3]),
    "csv_select_cols_short": lambda tf: tf.decode_csv(["1,2"], [[0], [0]], select_cols=[0, 2]),
    "csv_unquoted_quote": lambda tf: tf.decode_csv(['a"b,1'], [[""], [0]]),
    "csv_no_quote_delim": lambda tf: tf.decode_csv(['a"b,1'], [[""], [0]], use_quote_delim=False),
    "csv_bad_quote": lambda tf: tf.decode_csv(['"ab"c,1'], [[""], [0]]),
    "csv_unterminated_quote": lambda tf: tf.decode_csv(['"a'], [[""]]),
    "csv_bad_int": lambda tf: tf.decode_csv(["x,1"], [[0], [0]]),
    "csv_float_in_int": lambda tf: tf.decode_csv(["1.5,1"], [[0], [0]]),
    "csv_int32_overflow": lambda tf: tf.decode_csv(["99999999999"], [[0]]),
    "csv_spaces_and_signs": lambda tf: tf.decode_csv([" 1 ,+3,-0"], [[0], [0], [0]]),
    "csv_floats": lambda tf: tf.decode_csv(["inf,-INF,1e400,0x1p3, 2.5 ,.5,-nan"], [[0.0]] * 7),
    "csv_bad_float": lambda tf: tf.decode_csv(["1.2.3"], [[0.0]]),
    "csv_bad_double": lambda tf: tf.decode_csv(["abc"], [tf.constant([0.0], tf.float64)]),
    "csv_trailing_delim": lambda tf: tf.decode_csv(["1,", ",", '"a",2'], [[""], [5]]),
    "csv_empty_record": lambda tf: tf.decode_csv("", [[0]]),
    "csv_tab_delim": lambda tf: tf.decode_csv(["1\t2"], [[0], [0]], field_delim="\t"),
    "csv_long_delim": lambda tf: tf.decode_csv(["1,2"], [[0], [0]], field_delim="ab"),
    "csv_rank_2_records": lambda tf: tf.decode_csv([["1,2"], ["3,4"]], [[0], [0.0]]),
    "csv_scalar_default": lambda tf: tf.decode_csv(["1,"], [tf.constant(0), tf.constant("z")]),
    "csv_crlf_inside": lambda tf: tf.decode_csv(["1\r,2"], [[0], [0]]),
    "csv_quoted_crlf": lambda tf: tf.decode_csv(['"a\nb",2'], [[""], [0]]),
    # string_to_number
    "to_number_float": lambda tf: tf.string_to_number(
        ["1.5", " 2", "inf", "-nan", "1e3", "0x10", "+4", "-.5e-1"]
    ),
    "to_number_int32": lambda tf: tf.string_to_number(["12", "-3", " 7 ", "+4"], tf.int32),
    "to_number_int64_big": lambda tf: tf.strings.to_number(["9000000000", "-1"], tf.int64),
    "to_number_float64": lambda tf: tf.strings.to_number(["3000000000", "1e2"], tf.float64),
    "to_number_float_in_int": lambda tf: tf.string_to_number(["1.5"], tf.int32),
    "to_number_garbage": lambda tf: tf.string_to_number(["abc"]),
    "to_number_underscore": lambda tf: tf.string_to_number(["1_000"], tf.int32),
    "to_number_int32_overflow": lambda tf: tf.strings.to_number(["3000000000"], tf.int32),
    "to_number_empty": lambda tf: tf.string_to_number([""]),
    # decode_raw
    "raw_int16": lambda tf: tf.decode_raw([b"\x01\x02\x03\x04", b"\x05\x06\x07\x00"], tf.int16),
    "raw_big_endian": lambda tf: tf.decode_raw(
        [b"\x01\x02\x03\x04"], tf.int16, little_endian=False
    ),
    "raw_float32_scalar": lambda tf: tf.decode_raw(b"\x00\x00\x80\x3f", tf.float32),
    "raw_float64_big": lambda tf: tf.decode_raw(
        [b"\x3f\xf0\x00\x00\x00\x00\x00\x00"], tf.float64, little_endian=False
    ),
    "raw_uint8_rank_2": lambda tf: tf.decode_raw([[b"\x01\x02"], [b"\x03\x00"]], tf.uint8),
    "raw_uneven": lambda tf: tf.decode_raw([b"\x01\x02\x03\x04", b"\x05\x06"], tf.uint8),
    "raw_not_multiple": lambda tf: tf.decode_raw([b"\x01\x02\x03"], tf.int16),
    # string_split / strings.split
    "string_split_skip": lambda tf: tf.string_split(["a b  c", "", " d"], delimiter=" "),
    "string_split_keep": lambda tf: tf.string_split(
        ["a b  c", "", " d"], delimiter=" ", skip_empty=False
    ),
    "string_split_chars": lambda tf: tf.string_split(["a,b;c", "xy,"], delimiter=",;"),
    "string_split_bytes": lambda tf: tf.string_split(["abc", "de"], delimiter=""),
    "string_split_default": lambda tf: tf.string_split(["hello world", "x"]),
    "strings_split_space": lambda tf: tf.strings.split(["a b  c", "", " d\tx "]),
    "strings_split_sep": lambda tf: tf.strings.split(["a<>b<><>c", ""], sep="<>"),
    "strings_split_maxsplit": lambda tf: tf.strings.split(["a,b,c,d", "e"], sep=",", maxsplit=2),
    "strings_split_ws_maxsplit": lambda tf: tf.strings.split(["a b c"], maxsplit=1),
    # substr
    "substr_scalar_pos": lambda tf: tf.substr(["hello", "ab"], 1, 3),
    "substr_vector_pos": lambda tf: tf.substr(["hello", "ab"], [1, 0], [2, 5]),
    "substr_negative_pos": lambda tf: tf.substr(["hello"], -3, 2),
    "substr_at_end": lambda tf: tf.substr(["hello"], 5, 1),
    "substr_negative_len": lambda tf: tf.substr(["hello"], 1, -1),
    "substr_pos_too_big": lambda tf: tf.substr(["hello"], 6, 1),
    "substr_pos_too_small": lambda tf: tf.substr(["hello"], -6, 1),
    "substr_broadcast_input": lambda tf: tf.substr("hello", [1, 2], [1, 2]),
    "substr_utf8": lambda tf: tf.strings.substr(["héllo"], 1, 2, unit="UTF8_CHAR"),
    # join, length, regex_replace, strip, lower, upper
    "join_broadcast": lambda tf: tf.strings.join(["a", ["b", "c"]], separator="-"),
    "string_join": lambda tf: tf.string_join([["a", "b"], ["c", "d"]]),
    "length_bytes": lambda tf: tf.strings.length(["abc", "", "héllo"]),
    "length_chars": lambda tf: tf.strings.length(["héllo", ""], unit="UTF8_CHAR"),
    "regex_global": lambda tf: tf.strings.regex_replace(["aaa bb", "x"], "a+", "Z"),
    "regex_first": lambda tf: tf.strings.regex_replace(["aaa ba"], "a", "Z", replace_global=False),
    "regex_groups": lambda tf: tf.strings.regex_replace(["ab12cd"], r"(\d)(\d)", r"\2\1<\0>"),
    "regex_tf1_name": lambda tf: tf.regex_replace(["a.b.c"], r"\.", "/"),
    "regex_bad_pattern": lambda tf: tf.strings.regex_replace(["ab"], "(", "x"),
    "strip": lambda tf: tf.strings.strip(["  a b \n", "\t", "x"]),
    "string_strip": lambda tf: tf.string_strip([[" a "], ["b "]]),
    "lower_ascii": lambda tf: tf.strings.lower(["AbÉ"]),
    "upper_ascii": lambda tf: tf.strings.upper(["abé"]),
    "lower_utf8": lambda tf: tf.strings.lower(["AbÉ"], encoding="utf-8"),
    "upper_utf8": lambda tf: tf.strings.upper(["abé"], encoding="utf-8"),
}


def _run(tf: Any, build: Callable[[Any], Any]) -> tuple:
    """(static shapes, values) or ("raises", error class name, message)."""
    with tf.Graph().as_default():
        try:
            out = build(tf)
        except (TypeError, ValueError) as exc:
            return ("raises at build", type(exc).__name__, str(exc))
        outs = out if isinstance(out, list) else [out]
        shapes = [
            None
            if isinstance(o, tf.SparseTensor)
            else o.shape.as_list()
            if o.shape.rank is not None
            else None
            for o in outs
        ]
        with tf.Session() as sess:
            try:
                return shapes, sess.run(outs)
            except tf.errors.OpError as exc:
                return ("raises", type(exc).__name__, exc.message)


def _assert_same(ours: Any, theirs: Any) -> None:
    if hasattr(theirs, "indices"):  # a SparseTensorValue
        for a, b in zip(ours, theirs, strict=True):
            _assert_same(a, b)
        return
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
    if a.dtype == object:
        assert a.tolist() == b.tolist()
    else:
        np.testing.assert_array_equal(a, b)


# Python's ``re`` words its pattern errors differently from RE2: the common start only.
OWN_MESSAGES = {"regex_bad_pattern": "Invalid pattern: (, error: "}


def tf_error_text(message: str) -> str:
    """TF's own words in one of its graph-mode error messages (less the "Graph execution
    error", traceback and node lines it wraps them in)."""
    skip = ("Graph execution", "Detected at", "File ", "Node:", "node ")
    lines = [line.strip() for line in message.splitlines()]
    return next(line for line in lines if line and not any(k in line for k in skip))


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name: str) -> None:
    """Same values, dtypes and known static dimensions; or the same error class (a
    run-time one with TF's message)."""
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    ours, theirs = _run(dataflow, CASES[name]), _run(tf1, CASES[name])
    if theirs[0] == "raises at build":
        assert ours[:2] == theirs[:2], (ours, theirs)
        return
    if theirs[0] == "raises":
        assert ours[:2] == theirs[:2], (ours, theirs)
        expected = OWN_MESSAGES.get(name) or tf_error_text(theirs[2])
        assert expected in ours[2], (ours[2], theirs[2])
        return
    assert not isinstance(ours[0], str), ours
    for a, b in zip(ours[0], theirs[0], strict=True):
        assert b is None or a == b, (ours[0], theirs[0])
    for a, b in zip(ours[1], theirs[1], strict=True):
        _assert_same(a, b)


def test_decode_csv_build_errors() -> None:
    tf = dataflow
    with pytest.raises(TypeError, match="record_defaults' has DataType bool"):
        tf.decode_csv(["1"], [[True]])
    with pytest.raises(ValueError, match="length-0 or length-1 vector"):
        tf.decode_csv(["1,2"], [[0, 1], [0]])
    with pytest.raises(ValueError, match="not strictly increasing"):
        tf.decode_csv(["1,2"], [[0], [0]], select_cols=[1, 0])
    with pytest.raises(ValueError, match="do not match"):
        tf.decode_csv(["1,2"], [[0], [0]], select_cols=[0, 1, 2])
    with pytest.raises(TypeError, match="Expected string passed to parameter 'records'"):
        tf.decode_csv([1], [[0]])


def test_other_build_errors() -> None:
    tf = dataflow
    with pytest.raises(TypeError, match="out_type' has DataType int8"):
        tf.string_to_number(["3"], tf.int8)
    with pytest.raises(TypeError, match="out_type' has DataType string"):
        tf.decode_raw(["ab"], tf.string)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.string_split("abc")
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.string_split([["abc"]])
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.strings.join([["a", "b"], ["c", "d", "e"]])
    with pytest.raises(ValueError, match="same shape"):
        tf.substr(["abc", "d"], [1, 2, 3], 1)
    with pytest.raises(TypeError, match="Expected string passed to parameter 'input'"):
        tf.strings.length([1])


def test_string_ops_have_no_gradient() -> None:
    tf = dataflow
    x = tf.constant(["1.5"])
    y = tf.string_to_number(x)
    assert tf.gradients(tf.reduce_sum(y), x) == [None]


def test_decode_csv_keeps_trailing_nul_bytes() -> None:
    tf = dataflow
    (field,) = tf.decode_csv([b"a\x00,"], [[""]], select_cols=[0])
    with tf.Session() as sess:
        assert sess.run(field).tolist() == [b"a\x00"]
