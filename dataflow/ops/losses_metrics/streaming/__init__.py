"""``tf.metrics`` beyond the basic ones (``losses_metrics/metrics.py``), by family:

=============  ======================================================================
module         holds
=============  ======================================================================
``counting``   true/false positives/negatives (plain and at thresholds), precision and
               recall at thresholds, ``auc`` and sensitivity/specificity trade-offs
``averages``   running means of errors: absolute, relative, cosine distance, RMSE,
               ``percentage_below``, ``mean_tensor``, ``mean_per_class_accuracy``
``top_k``      ranking metrics over the top ``k`` predictions: precision, recall and
               average precision at ``k``
=============  ======================================================================

Every metric returns ``(value, update_op)`` over local metric variables, as TF1 does.
"""
