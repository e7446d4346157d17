"""Grid expansion, the process-isolated runner, the worker (build, solve, verify, re-score), references and gaps, the store."""
