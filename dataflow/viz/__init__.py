"""Drawing graphs, HTML reprs and trace export (layer 3)."""
