"""Evaluation: leave-one-out retrieval on the casebook; later the PARB benchmark and harness."""
