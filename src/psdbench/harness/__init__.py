"""Grid expansion, process-isolated runner, verification, references, store and reports."""
