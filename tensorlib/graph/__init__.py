"""Graph mode: IR, tracing, executor, passes, serialization."""
