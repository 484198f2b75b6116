"""Turning what arrives (API bodies, EventBridge events, files) into stored observations."""
