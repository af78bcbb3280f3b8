"""Whole-flow tests over real processes: webhooks in, the worker, Storage, alerts, bursts."""
