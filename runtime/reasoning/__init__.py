"""Reasoning kept apart from the answer: which markers a model thinks between (markers.py), a streaming
splitter that sends each piece of a reply to the reasoning or the answer (splitter.py), and one reply's
accounting of it: tokens, time, and the budget that closes the block (reply.py)."""
