"""``tf.lookup`` tables: hash tables and their initializers (``tables``), the state a
table keeps on its device (``table_state``), vocabulary tables with out-of-vocabulary
buckets and the ``index_table_from_*`` builders (``vocabulary``), and the string hash
the buckets use (``fingerprint``)."""
