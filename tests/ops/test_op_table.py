"""Every row of the op table (``tests/ops/op_table.py``) through the shared checks.

Forward values and gradients (to the row's order) against ``autograd`` and finite
differences; static shapes and dtypes against the values, with the inputs' shapes known
and with only their ranks known; values, static shapes and gradients against
``tensorflow.compat.v1``; and the table's coverage of the registry.
"""

from __future__ import annotations

import pytest

from dataflow.framework import registry
from dataflow.testing import op_spec

from .op_table import OP_TABLE

# autograd says so for the second derivative of a piecewise-linear op; not a failure.
pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")

ROWS_WITH_TF = [row for row in OP_TABLE if row.tf_parity]

# Op types no pure row can build, each with where it is tested instead.
NOT_IN_THE_TABLE = {
    "ReportUninitialized": "reads the session's variables: tests/runtime/test_session.py",
    "Replay": "replays a stateful op's recorded value (a random draw) when a gradient "
    "recomputes a body: tests/ops/control/test_control_flow.py",
    **{
        summary: "returns a serialized Summary proto, not an array a reference computes "
        "(PNG and WAV bytes differ between encoders): tests/summary/test_summary_parity.py "
        "compares what TensorBoard reads back with TF1's event files"
        for summary in (
            "ScalarSummary",
            "HistogramSummary",
            "ImageSummary",
            "AudioSummary",
            "TensorSummaryV2",
            "MergeSummary",
        )
    },
    **{
        dataset: "a dataset's value is a host pipeline, not an array a reference computes: "
        "tests/data/test_dataset_parity.py compares every dataset op's elements with TF1's"
        for dataset in (
            "BatchDataset",
            "CacheDataset",
            "ConcatenateDataset",
            "FilterDataset",
            "FlatMapDataset",
            "GeneratorDataset",
            "InterleaveDataset",
            "MapDataset",
            "PaddedBatchDataset",
            "PrefetchDataset",
            "RangeDataset",
            "RepeatDataset",
            "ShuffleDataset",
            "SkipDataset",
            "TFRecordDataset",
            "TakeDataset",
            "TensorDataset",
            "TensorSliceDataset",
            "TextLineDataset",
            "ZipDataset",
        )
    },
    "FixedLengthRecordDataset": "a host pipeline reading files: "
    "tests/data/test_fixed_length_records_tf.py compares its records with TF1's",
    "ShardDataset": "a host pipeline: tests/data/test_shard_enumerate_options_tf.py compares "
    "each shard's elements with TF1's",
    "DaskDataset": "reads the partitions of a Dask collection: tests/data/test_from_dask.py "
    "compares its rows and batches with numpy and pandas",
    "MatchingFiles": "lists the file system: tests/data/test_dataset_parity.py compares "
    "list_files with TF's",
    **{
        saver: "part of a saver a MetaGraph holds (file names, path checks): "
        "tests/ops/state/test_tf_saver_ops.py compares it with TF's raw op"
        for saver in ("ShardedFilename", "StaticRegexFullMatch")
    },
    "BroadcastGradientArgs": "integer axes from two shape vectors, for TF's gradients: "
    "tests/ops/state/test_tf_saver_ops.py compares it with TF's raw op",
    "ReadFile": "reads a file's bytes: tests/test_tf1_missing_names.py compares read_file "
    "with TF's",
    "DecodeImage": "decodes compressed bytes (PNG, JPEG): tests/ops/image/test_image.py compares "
    "its pixels with TF's decoder",
    "IteratorToStringHandle": "names an iterator resource: tests/data/test_dataset_parity.py",
    "IteratorFromStringHandle": "names an iterator resource: tests/data/test_dataset_parity.py",
    **{
        parsing: "parses serialized Example protos (string inputs, dicts of dense and sparse "
        "outputs): tests/ops/io/test_parsing_ops.py compares every feature kind with TF's"
        for parsing in ("ParseExample", "ParseSingleExample")
    },
    **{
        strings: "takes or gives strings (host object arrays), which the table's numeric "
        "inputs and gradient checks cannot: tests/ops/strings/test_string_ops.py compares values, "
        "shapes and errors with TF's"
        for strings in (
            "DecodeCSV",
            "DecodeRaw",
            "RegexReplace",
            "StringJoin",
            "StringLength",
            "StringLower",
            "StringSplit",
            "StringStrip",
            "StringToNumber",
            "StringUpper",
            "Substr",
        )
    },
    **{
        stateless: "a seeded draw (values are this project's, not Philox's): "
        "tests/ops/random/test_distributions_tf.py checks static shapes and dtypes against "
        "TF1, determinism per seed and the distribution (Kolmogorov-Smirnov, chi-square)"
        for stateless in (
            "StatelessMultinomial",
            "StatelessRandomBinomial",
            "StatelessRandomGammaV2",
            "StatelessRandomNormal",
            "StatelessRandomPoisson",
            "StatelessRandomUniform",
            "StatelessRandomUniformInt",
            "StatelessTruncatedNormal",
            "StatelessTruncatedNormalBounded",
        )
    },
    "RandomGammaGrad": "the gamma sampler's derivative at its own draws: "
    "tests/ops/random/test_distributions_tf.py compares it with TF1's RandomGammaGrad",
    **{
        nms: "selects boxes (indices, not a function a reference differentiates): "
        "tests/ops/image/test_nms_tf.py compares every variant with TF's"
        for nms in (
            "NonMaxSuppressionV3",
            "NonMaxSuppressionV4",
            "NonMaxSuppressionV5",
            "NonMaxSuppressionWithOverlaps",
            "CombinedNonMaxSuppression",
        )
    },
    "DrawBoundingBoxesV2": "paints box outlines: tests/ops/image/test_boxes_tf.py compares "
    "the pixels with TF's",
    "EncodePng": "gives PNG bytes: tests/ops/image/test_png_tf.py decodes them with TF's decoder",
    **{
        jpeg: "gives JPEG bytes or reads their header: tests/ops/image/test_jpeg_tf.py "
        "decodes them with TF's decoder and compares header facts with TF's"
        for jpeg in ("EncodeJpeg", "EncodeJpegVariableQuality", "ExtractJpegShape")
    },
    "DecodeGif": "decodes a file's bytes: tests/ops/image/test_gif_tf.py compares the "
    "frames with TF's",
    **{
        parsing: "parses serialized SequenceExample protos (dicts of dense and sparse "
        "outputs): tests/ops/io/test_sequence_example_tf.py compares them with TF's"
        for parsing in ("ParseSequenceExample", "ParseSingleSequenceExample")
    },
    "EditDistance": "takes SparseTensors (integer or string values): "
    "tests/ops/sparse/test_edit_distance_tf.py compares the distances with TF's",
    **{
        codec: "takes or gives strings (host object arrays): tests/ops/io/test_codecs_tf.py "
        "(base64, decompression, TensorProtos, WAV files) and "
        "tests/ops/strings/test_conversions_tf.py (formatting, matching, joins) compare "
        "them with TF's"
        for codec in (
            "AsString",
            "DecodeBase64",
            "DecodeCompressed",
            "DecodeWav",
            "EncodeBase64",
            "EncodeWav",
            "ParseTensor",
            "ReduceJoin",
            "RegexFullMatch",
            "SerializeTensor",
            "UnsortedSegmentJoin",
        )
    },
    "Fingerprint": "hashes rows (strings are host object arrays) with FarmHash: "
    "tests/framework/test_framework_names_more_tf.py compares it with TF's for numeric and "
    "string rows",
    "HashBucketFast": "hashes strings (host object arrays) with FarmHash: "
    "tests/ops/lookup/test_lookup.py compares its buckets with TF's to_hash_bucket_fast over "
    "every length branch of the hash",
    **{
        op_type: "hashes strings (host object arrays): tests/ops/strings/test_hash_buckets_tf.py "
        "compares its buckets with TF's over lengths 0 to 80 and random bytes"
        for op_type in ("StringToHashBucket", "StringToHashBucketStrong")
    },
    **{
        op_type: "takes or gives strings (host object arrays): "
        "tests/ops/strings/test_unicode_ngrams_tf.py compares them with TF's"
        for op_type in ("UnicodeEncode", "UnicodeTranscode")
    },
    "DecodeJSONExample": "gives serialized Example protos (host object arrays): "
    "tests/ops/io/test_json_example_tf.py compares the parsed messages with TF's",
    **{
        op_type: "SparseTensors as TensorProto strings (host object arrays): "
        "tests/ops/io/test_sparse_serial_tf.py compares the parsed parts and the stacked "
        "results with TF's, and reads TF's strings"
        for op_type in ("SerializeSparse", "SerializeManySparse", "DeserializeManySparse")
    },
    "StringFormat": "gives a string (host memory): tests/ops/strings/test_format_tf.py "
    "compares the text with TF's",
}


def test_row_names_are_unique() -> None:
    names = op_spec.ids(OP_TABLE)
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("row", OP_TABLE, ids=op_spec.ids(OP_TABLE))
def test_forward_and_gradients(row: op_spec.OpSpec) -> None:
    op_spec.check_forward_and_gradients(row)


@pytest.mark.parametrize("row", OP_TABLE, ids=op_spec.ids(OP_TABLE))
def test_static_shapes_and_dtypes(row: op_spec.OpSpec) -> None:
    op_spec.check_static_shape(row)


@pytest.mark.tf
@pytest.mark.parametrize("row", ROWS_WITH_TF, ids=op_spec.ids(ROWS_WITH_TF))
def test_tf_parity(row: op_spec.OpSpec) -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    op_spec.check_tf_parity(row, tf1)


def test_the_table_builds_every_pure_op_type() -> None:
    """Each registered op type that is neither stateful nor plumbing is built by some
    row's forward or gradient graph (stateful ops have suites of their own: variables,
    queues, random streams, savers, optimizers)."""
    built: set[str] = set()
    for row in OP_TABLE:
        built |= op_spec.op_types_built(row)
    pure = {
        t
        for t in registry.registered_types()
        if not (registry.lookup(t).stateful or registry.lookup(t).plumbing)
    }
    missing = sorted(pure - built - set(NOT_IN_THE_TABLE))
    assert not missing, f"no row of the op table builds {missing}"
    assert not set(NOT_IN_THE_TABLE) & built, "a listed exception is built by a row now"
