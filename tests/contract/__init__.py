"""Checks of the conversion's contract written from its documentation: lazy tracing bodies
and their caches, Python semantics with converted bodies forced, converted code size, the
README test profile, and return/break/continue under tensors."""
