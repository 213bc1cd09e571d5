"""Functional neural-network ops (Paddle 2.x ``paddle.nn.functional``)."""
