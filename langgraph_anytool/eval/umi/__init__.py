"""alpha-UMi step-level evaluation: data, predictions, metrics, hallucination, the `steps` entry point."""
