"""Checkpoint files: TF's own V2 bundle (the ``.index`` table and the data
shards, ``tf_table``/``tf_bundle``), dataflow's earlier format (``native``), and the
temporary files of atomic writes."""
