"""Runnable examples of clients of Service Operator."""
