"""TF1's namespace aliases: ``tf.dtypes``, ``tf.queue``, ``tf.manip``, ``tf.version`` and
``tf.bitwise``, one small module each (explicit re-exports only), exposed by the top level
as ``tf.dtypes`` and so on.

Most of their names are at the top level too (``tf.int32``, ``tf.FIFOQueue``,
``tf.reshape``, ``tf.VERSION``); these modules give the same objects under the spelling
TF1 code also uses. They sit in a folder of their own to keep ``dataflow/`` a folder a
reader can scan.
"""
