"""State: variables and their op records, ``variable_scope``/``get_variable`` and the
variable store, initializers, save/restore ops and the checkpoint format."""
