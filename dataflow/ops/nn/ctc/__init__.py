"""Connectionist temporal classification: ``ctc_loss`` and the greedy and beam-search
decoders."""
