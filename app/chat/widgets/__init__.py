"""Widgets that render the chat models; the logic lives in app/chat/controller.py."""
