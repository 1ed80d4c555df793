//! The trace layer: the trace format v1 and the readers that turn bytes into events.
