"""Telemetry: OpenTelemetry traces and metrics, and the Prometheus endpoint (docs/operations.md)."""
