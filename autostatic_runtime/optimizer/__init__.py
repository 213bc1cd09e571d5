"""Optimizers and learning-rate schedules (Paddle 2.x ``paddle.optimizer``)."""
