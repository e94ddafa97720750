"""How long a copy found by prompt lookup goes on: the chance it breaks at the next token, by how long it has run.

A lookup draft continues a run of earlier text that the reply has been copying
for n tokens (the match length). If its first m - 1 tokens are accepted, the copy
has run n + m - 1 tokens when the m-th is judged. So every judged token, at any
position of any draft and after any match length, is evidence about one
function: h(L), the chance that a copy which has run L tokens breaks at the next
one. A draft after a match of n survives its first m tokens with chance
S(m) = (1 - h(n)) (1 - h(n + 1)) ... (1 - h(n + m - 1)).

Learning h by run length rather than by draft position is what lets short drafts
teach long ones: five-token drafts that keep being accepted after 64-token
matches say that copies that long go on, which is what a 64-token draft needs to
know; and a long draft broken at its 6th token after a 32-token match says so
about runs of 37, whatever match the next draft starts from.

Run lengths are grouped in bins (1, 2, 3, 4-5, 6-7, 8-11, ... 128+), learnt as
break_rates.py does for both drafters. A copy of earlier text
(a file given to edit, an earlier turn) and a copy of the reply's own earlier
words are learnt apart, from priors that bench/copy_runs.py measured.
"""

from __future__ import annotations

from runtime.speculative.break_rates import BreakRates, bin_of

RUN_BINS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
# h per bin before anything was judged: what bench/copy_runs.py measured on the benchmark's replies with
# Qwen2.5-Coder-1.5B (docs/benchmarks/copy_runs.json), rounded. Copies of earlier text (the code given to edit)
# and copies of the reply's own earlier words behave apart: runs of 12-15 broke 4 % of the time in the first and
# 38 % in the second, which never ran 16 tokens there. So each has its own estimate. Earlier text: every kind
# pooled (nearly all of it code); runs of 24-31 (4 breaks in 1665) get their neighbours' 1 %, and 128+ (never
# reached) that of 96-127. The reply: every kind pooled; 16+ never reached, so a guess between, soon corrected.
PRIOR_H_EARLIER_TEXT = (0.8, 0.48, 0.28, 0.31, 0.14, 0.14, 0.044, 0.015, 0.01, 0.01, 0.01, 0.004, 0.008, 0.008)
PRIOR_H_REPLY = (0.8, 0.58, 0.33, 0.39, 0.28, 0.26, 0.38, 0.2, 0.1, 0.05, 0.05, 0.05, 0.05, 0.05)
PRIOR_TOKENS = 4.0  # pseudo-observations per bin, at the prior's rate


def run_bin(length: int) -> int:
    """The bin of a copy that has run `length` tokens (length >= 1)."""
    return bin_of(RUN_BINS, length)


class CopyRuns(BreakRates):
    """h by how long the copy has run: a draft after a match of n tokens starts at n (`survival(n, k)`, `observe(n, ...)`)."""

    def __init__(self, prior_h: tuple[float, ...] = PRIOR_H_EARLIER_TEXT):
        super().__init__(RUN_BINS, prior_h, PRIOR_TOKENS)
