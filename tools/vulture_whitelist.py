# vulture whitelist: names used dynamically or kept as TF1 API (each says why)
