"""Training loops: ``MonitoredSession`` and ``MonitoredTrainingSession``, hooks,
the ``Scaffold``, the ``Supervisor``, the ``Coordinator`` and progress reporting."""
