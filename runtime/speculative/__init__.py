"""Speculative decoding: cheap drafts (prompt lookup, a small draft model) verified by the target in one batch.

The output distribution is exactly the target's (speculative sampling, Leviathan et al. 2023;
Chen et al. 2023); an adaptive controller decides, from acceptance and costs measured on this
machine, how many tokens to draft and whether drafting pays at all.
"""
