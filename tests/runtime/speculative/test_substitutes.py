"""Tokens the reply writes in place of the source's, the copy going on after them (a re-indent, a rename): learnt as
substitutes, and drafted so, the copy's run counted across them."""

from __future__ import annotations

from runtime.llama.generation import BatchSoFar
from runtime.llama.sampling import SamplingConfig
from runtime.speculative.decoder import Drafting
from runtime.speculative.replaced import PRIOR_SUBSTITUTES, ReplacedTokens
from spec_helpers import lookup_drafting

# A function body of eight lines, each an indent and then five words of its own and a line end. The edit moves it into a
# `with` block: one line inserted before it, and every line's indent token replaced by a wider one.
INDENT, WIDER, LINE_END, WITH = 700, 701, 702, 703
LINES = [[INDENT, *range(100 + 10 * line, 105 + 10 * line), LINE_END] for line in range(8)]
SOURCE = [1, 2, 3, *(t for line in LINES for t in line)]
REPLY = [1, 2, 3, INDENT, WITH, LINE_END, *(WIDER if t == INDENT else t for line in LINES for t in line)]
GREEDY = SamplingConfig(temperature=0.0)


def drafting() -> Drafting:
    return lookup_drafting(SOURCE)


def replay(drafting: Drafting, reply: list[int]) -> list[tuple[int, list[int], int, int]]:
    """The reply decoded as the runtime steps it, `drafting` drafting each pass: (where in the reply, draft, the run it
    was priced as, tokens held)."""
    history = SOURCE + reply[:1]
    drafting.lookup.reset(history)
    passes = []
    at = 1
    while at < len(reply):
        draft = drafting.propose(history, len(reply) - at, GREEDY, None, BatchSoFar())
        tokens = draft.tokens if draft is not None else []
        held = 0
        while held < len(tokens) and at + held < len(reply) and tokens[held] == reply[at + held]:
            held += 1
        emitted = reply[at : at + held + 1]
        if draft is not None:
            drafting.judged(draft.match, draft.start, len(tokens), held, draft.of_reply, draft.resumes, emitted[-1], draft.substituted, draft.carried)
        drafting.score_shadow(emitted)
        passes.append((at, tokens, draft.match if draft is not None else 0, held))
        history.extend(emitted)
        drafting.lookup.extend(emitted)
        at += held + 1
    return passes


def test_once_the_reply_re_indented_lines_a_copy_runs_on_across_them_one_pass_a_line():
    learnt = drafting()
    passes = replay(learnt, REPLY)
    assert learnt.controller.replaced.substitutes[INDENT][WIDER] >= 3
    fourth = [i for i, t in enumerate(REPLY) if t == WIDER][3]
    later = [(tokens, run, held) for at, tokens, run, held in passes if at > fourth]
    assert len(later) <= len(LINES) - 3  # each line in one pass: the draft held to the line's end, the target wrote the indent
    assert all(held == len(tokens) for tokens, _, held in later)
    # Priced as the copy it is: a run across the re-indented lines, where the suffix since the last indent is one line.
    assert min(run for _, run, _ in later) > len(LINES[0])


def test_a_substitute_carries_the_copys_run_from_its_second_time_on_and_a_token_not_yet_one_never_does():
    ends = [i + 1 for i, t in enumerate(REPLY) if t == LINE_END]  # the `with` line's end, then each body line's
    once, twice = ends[2], ends[3]  # the reply re-indented the copy's second line, then its third
    learnt = drafting()
    replay(learnt, REPLY[:once])
    assert learnt.controller.replaced.substitutes == {INDENT: {WIDER: 1}}
    # Written once, it may have been a one-off rewrite of more than the indent: the run counts from after it.
    first = learnt.propose(SOURCE + REPLY[:once], 64, GREEDY, None, BatchSoFar())
    copy = first if first is not None else learnt.shadow
    assert copy is not None and copy.match < len(LINES[0]) and not copy.carried
    learnt = drafting()
    replay(learnt, REPLY[:twice])
    carried = learnt.propose(SOURCE + REPLY[:twice], 64, GREEDY, None, BatchSoFar())
    assert carried is not None and carried.carried and carried.match > len(LINES[0])
    assert carried.tokens[0] == WIDER and carried.substituted[0] == (0, WIDER)
    # Now the reply writes something other than the next word, where it may as well insert text as replace one token.
    learnt.lookup.extend([999])
    draft = learnt.propose(SOURCE + REPLY[:twice] + [999], 64, GREEDY, None, BatchSoFar())
    assert draft is None or draft.match < len(LINES[0])
    assert 999 not in {t for by in learnt.controller.replaced.substitutes.values() for t in by}


def test_a_substitute_is_drafted_once_written_more_often_than_the_token_was_copied_and_weighed_by_how_often():
    replaced = ReplacedTokens()
    history = [5, 6, INDENT, 7, 8, 9]
    replaced.substituted_at(history, 2, WIDER)
    tokens, chances, substituted = replaced.substitute([6, INDENT, 7])
    assert tokens == [6, WIDER, 7] and substituted == [(1, WIDER)]
    once = (1 + PRIOR_SUBSTITUTES) / (1 + 2 * PRIOR_SUBSTITUTES)
    assert chances == [1.0, once, once]
    # A draft that wrote it held there: one more time written. One that broke there where the reply copied the source's
    # token: a copy, and the copy did not break.
    replaced.judged(history, 1, 8, drafted=3, agreed=3, substituted=[(1, WIDER)])
    assert replaced.substitutes[INDENT][WIDER] == 2
    replaced.judged(history, 1, 8, drafted=3, agreed=1, substituted=[(1, WIDER)], next_token=INDENT)
    assert replaced.copied[INDENT] == 1 and replaced.broken_at is None
    assert replaced.substitute([INDENT])[1] == [(2 + PRIOR_SUBSTITUTES) / (3 + 2 * PRIOR_SUBSTITUTES)]
    # Copied as often as written: the source's token is drafted again.
    replaced.copied[INDENT] += 1
    assert replaced.substitute([INDENT])[0] == [INDENT]
