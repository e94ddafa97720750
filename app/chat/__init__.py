"""Conversations: the list and message models, the chat logic, and the widgets that render them."""
