"""Input files and records: readers, TFRecord framing, ``tf.train.Example`` protos,
``parse_example`` and the CSV/raw decoders."""
