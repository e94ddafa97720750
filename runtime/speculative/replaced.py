"""Which tokens of the text being copied the reply replaces: a lookup draft is priced as likely to break at them.

An edit repeats itself through the text it is applied to: a rename replaces
every use of the old name, a port to another API every call of the old one.
Where a copy broke at source position p and the reply later went on copying
from q, a little further on (the next match continues the source there), the
reply wrote something else in place of source[p:q]: those tokens are the
edit's. A later draft that would copy one of them is likely to break there,
whatever the copy's run length says (scanner-pathlib, ported from os.path to
pathlib: after three `os.path` calls were replaced, a 64-token draft after a
64-token match still copied the next one and kept 7 of its tokens). Where q
is further on, two edits close together may lie between, with source tokens
the reply copied between them: a diff of source[p:q] with what the reply wrote
there says which of them it replaced.

Each token is counted against the times drafts copied it and were right: a
token the reply both replaced and keeps copying (a bracket, a common name) is
no sign of an edit.

A copy that resumes where it broke replaced nothing: the reply inserted
something there. Edits insert in the same place again and again (add logging: a
call at the top of every function body; add docstrings: one after every `def`
line), and that place is known by the CONTEXT source tokens before it (the
`):\n` that ends a `def` line, then the body's indent). A later draft that would
copy past such a context is likely to break there, counted like a replaced token
against the times drafts copied past it and held. In the benchmark's
module-logging reply, a 59-token draft copied past the next function's first line
and kept 21 of its tokens (bench/lookup_replay.py --trace module-logging).

Where the reply then inserts at such a place (a draft ended before it, and the
target wrote something else there), the copy is resumed there as soon as the
reply writes the source's token before the place (an inserted line ends with the
next line's indent): the suffix after an inserted line matches the source by
that indent alone, which occurs on every line, so prompt lookup found the copy
again only a few tokens and passes later. Whether the inserted text has ended
at that token is learnt: from the drafts that resumed so, and from every
insertion learnt by a resumed copy (would a draft at each such token in the
inserted text have held?).

A token the reply replaces by one other token, the copy going on right after
it, is an edit the reply repeats: a rename replaces a one-token name so, and a
re-indent every line's indent token by a wider one (parser-with, its body moved
into a `with` block: each line's `       ` became `           `, the rest of the
line copied, so every line broke the copy at its indent, and neither prompt lookup
nor the peer's n-gram pool drafted past one). Where the reply has written such a
substitute more often than it has copied the token, a copy is drafted with it,
weighed by how often the reply wrote it there.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Hashable, Iterable, Sequence

SPAN_MAX = 16  # the most tokens a resumed copy may have skipped to count all of them replaced
# ... and up to this many, the reply may have copied some of them between two edits close together: those it wrote
# again (a diff of the skipped tokens with what it wrote there) are not replaced, and if it wrote fewer than half of
# them again, the copy jumped. Further on, it always jumped.
SPAN_LONGEST = 64
# The shortest suffix match that says where in the earlier text the reply stands: a 1- to 3-token match after an
# edit is often a coincidence elsewhere (js-fix-empty: a 1-token match into the chat template's header).
MATCH_MIN = 4
# ... unless the match is the whole reply so far: it has copied from its first token. scanner-pathlib's reply opened
# with the prompt's code fence and language, 3 tokens, then rewrote the first line (`import os`); unseen, the `os`
# it replaced was drafted in a 47-token copy two lines on, which kept 2. A 1-token match is still no sign: the reply's
# fence matched the one that closes the prompt's code.
MATCH_MIN_WHOLE_REPLY = 2
# The copied run (the suffix matched and the drafted tokens right) that shows the copy went on there: after a line was
# inserted, a few of its words may occur a little further on in the source (module-logging: `item.sku` of the
# inserted `logger.debug` call matched the next line's code, which the reply then copied, not replaced).
RESUMED_RUN = 8
PRIOR_COPIES = 2.0
CONTEXT = 2  # the source tokens before an insertion that say where the edit inserts
PRIOR_RESUMES = 0.5  # pseudo-observations each way of whether an inserted text ended where the reply wrote the break's token
PRIOR_SUBSTITUTES = 0.5  # pseudo-observations each way of whether the reply writes a token's substitute again


class ReplacedTokens:
    def __init__(self) -> None:
        self.replaced: Counter[int] = Counter()
        self.copied: Counter[int] = Counter()
        self.broken_at: int | None = None  # where the copy first broke since it last went on
        self.inserted: Counter[tuple[int, ...]] = Counter()  # contexts after which the reply inserted text
        self.passed: Counter[tuple[int, ...]] = Counter()  # ... and how often drafts copied past them and held
        self.broken_run = 0  # how long the copy had run where it broke
        self.broke_in_reply = 0  # where in the history the reply wrote something else there
        self.resumes = [0, 0]  # drafts that resumed a copy where an insertion broke it: [held, broke at once]
        self.substitutes: dict[int, Counter[int]] = {}  # source token -> the single tokens the reply wrote in its place

    def judged(
        self, history: Sequence[int], start: int, match: int, drafted: int, agreed: int, of_reply: bool = False, resumed: bool = False,
        substituted: Sequence[tuple[int, int]] = (), next_token: int | None = None, counted: bool = False, whole_reply: bool = False,
    ) -> None:
        """A lookup draft continuing `history` at `start` after a suffix match of `match` tokens (history's last
        `match` tokens occur before `start`): `drafted` tokens judged, the first `agreed` right. Only copies of earlier
        text (`of_reply` false) show an edit. `resumed`: the draft was `resumption()`'s, `match` the run the copy had.
        `substituted`: (offset, token) where the draft wrote `substitute()`'s token for the source's; `next_token`: the
        target's own token after the agreed ones, if known. `counted`: what the reply wrote there is told `wrote()`.
        `whole_reply`: the suffix matched is every token the reply has written (MATCH_MIN_WHOLE_REPLY then suffices)."""
        swapped = dict(substituted)
        if not counted:
            for offset in range(agreed):
                self.wrote(history[start + offset], swapped.get(offset, history[start + offset]))
        went_on = False  # the draft broke at a substitute where the reply copied the source's token: the copy went on
        if agreed in swapped and agreed < drafted:
            source = history[start + agreed]
            went_on = next_token == source
            if not counted:
                self.wrote(source, next_token if went_on else None)
        if self.inserted:
            # A resumed copy's first token follows the inserted text, not the place: it is no sign of copying past it.
            contexts = self._contexts(history, start, match, agreed)
            if resumed:
                next(contexts, None)
            self.passed.update(c for c in contexts if c in self.inserted)
        if resumed:
            self.resumes[0 if agreed else 1] += 1
            if not agreed:
                return  # the inserted text goes on: the copy still stands where it broke
            self.inserted[_place(history, start)] += 1
            self.broken_at = None
        elif of_reply or match < (MATCH_MIN_WHOLE_REPLY if whole_reply else MATCH_MIN):
            return
        if agreed and match + agreed >= RESUMED_RUN and self.broken_at is not None:
            broken_at = self.broken_at
            began = _copy_began(history, start, match, broken_at)
            if began <= broken_at < start:
                # The copy goes on through where it broke: the reply inserted text there (which may end as the
                # source does before that point, as an inserted line ends with the next line's indent).
                if broken_at >= CONTEXT:
                    self.inserted[_place(history, broken_at)] += 1
                    self._would_have_resumed(history[self.broke_in_reply : len(history) - (start - broken_at)], history[broken_at - 1])
                self.broken_at = None
            elif began > broken_at:
                written = history[self.broke_in_reply : len(history) - (start - began)]
                self.replaced.update(_rewritten(history[broken_at:began], written))
                if began - broken_at == 1 and len(written) == 1:
                    self.substitutes.setdefault(history[broken_at], Counter())[written[0]] += 1
                self.broken_at = None
        if agreed < drafted and self.broken_at is None and not went_on:
            self._broke(history, start, match, agreed)

    def _broke(self, history: Sequence[int], start: int, match: int, agreed: int) -> None:
        self.broken_at, self.broken_run, self.broke_in_reply = start + agreed, match + agreed, len(history) + agreed

    def _would_have_resumed(self, inserted: Sequence[int], before: int) -> None:
        """What `resumption()` would have met in the `inserted` text, the copy going on after it: at every `before` (the
        source token before the place) a resumed draft; the one that ends the text holds, any earlier one breaks."""
        ends = sum(1 for t in inserted if t == before)
        held = 1 if inserted and inserted[-1] == before else 0
        self.resumes[0] += held
        self.resumes[1] += ends - held

    def target_wrote(self, history: Sequence[int], start: int, match: int, agreed: int, token: int) -> None:
        """After a lookup draft from `start` whose `agreed` tokens all held, the target's own next token: where a draft
        ended before a place the edit inserts and the reply inserted there, the copy broke at that place."""
        at = start + agreed
        if self.broken_at is None and at < len(history) and not self.written_for(history[at], token) and _place(history, at) in self.inserted:
            self._broke(history, start, match, agreed)

    def resumption(self, history: Sequence[int]) -> tuple[int, int, float] | None:
        """Where a copy that broke at a place the edit inserts goes on, once the reply has written the token the source
        has before that place (an inserted line ends with the next line's indent): (where, how long the copy had run,
        the chance that the inserted text ended here). None if the copy did not break so, or the reply is not there.

        The suffix after an inserted line (its end, then the indent) matches the source only by that indent token,
        which occurs on every line: prompt lookup found the copy again a few tokens later, each of them a pass
        (module-logging with one thread: 1-token drafts, 1.8 steps each, after every inserted line).
        """
        at = self.broken_at
        if at is None or at < CONTEXT or at >= len(history) - 1 or history[-1] != history[at - 1]:
            return None
        if _place(history, at) not in self.inserted:
            return None
        held, broke = self.resumes
        return at, self.broken_run, (held + PRIOR_RESUMES) / (held + broke + 2 * PRIOR_RESUMES)

    def _contexts(self, history: Sequence[int], start: int, match: int, k: int):
        """For m = 1 .. k: the CONTEXT source tokens before the m-th token a draft copies from `start`, or None where the
        reply's own tokens before it may differ (the suffix matched fewer than CONTEXT tokens before `start`)."""
        for p in range(start, start + k):
            yield tuple(history[p - CONTEXT : p]) if p - start + match >= CONTEXT and p >= CONTEXT else None

    def not_inserted(self, history: Sequence[int], start: int, match: int, k: int) -> list[float]:
        """For m = 1 .. k: the chance that the reply inserts nothing before any of the first m tokens a draft copies
        from `start` after a suffix match of `match` tokens."""
        if not self.inserted:  # as in most conversations: this runs for every lookup match
            return [1.0] * k
        return _held_past(self._contexts(history, start, match, k), self.inserted, self.passed)

    def kept(self, tokens: Sequence[int]) -> list[float]:
        """For m = 1 .. len(tokens): the chance that the reply copies the first m of `tokens` rather than replacing one."""
        if not self.replaced:  # nothing replaced yet, as in most conversations: this runs for every lookup match
            return [1.0] * len(tokens)
        return _held_past(tokens, self.replaced, self.copied)

    def substitute(self, tokens: Sequence[int]) -> tuple[list[int], list[float], list[tuple[int, int]]]:
        """A copy of the source's `tokens` as the reply is likely to write it: each token it has replaced by one token
        more often than it copied it, so replaced. Returns the copy; for m = 1 .. len(tokens), the chance that the
        reply writes its first m tokens; and (offset, token) for each token substituted."""
        if not self.substitutes:
            return list(tokens), self.kept(tokens), []
        out: list[int] = []
        chances: list[float] = []
        swapped: list[tuple[int, int]] = []
        chance = 1.0
        for offset, token in enumerate(tokens):
            broken, copied = self.replaced.get(token, 0), self.copied.get(token, 0)
            by = self.substitutes.get(token)
            written, times = by.most_common(1)[0] if by else (token, 0)
            if times > copied:
                swapped.append((offset, written))
                chance *= (times + PRIOR_SUBSTITUTES) / (broken + copied + 2 * PRIOR_SUBSTITUTES)
            else:
                chance *= _holds_past(broken, copied)
            out.append(written if times > copied else token)
            chances.append(chance)
        return out, chances, swapped

    def written_for(self, source: int, token: int) -> bool:
        """Whether the reply writing `token` where the source has `source` goes on copying: the same, or a substitute."""
        return token == source or token in self.substitutes.get(source, ())

    def substituted_at(self, history: Sequence[int], at: int, written: int) -> None:
        """The reply wrote `written` in place of history[at] and went on with the copy after it."""
        self.substitutes.setdefault(history[at], Counter())
        self.wrote(history[at], written)
        if self.broken_at == at:
            self.broken_at = None  # the copy broke there for the substitute alone

    def wrote(self, source: int, written: int | None) -> None:
        """Where a copy had `source`, the reply wrote `written`: the same, a substitute, or (None) something else."""
        if written == source:
            self.copied[source] += 1
            return
        self.replaced[source] += 1
        if written is not None and source in self.substitutes:
            self.substitutes[source][written] += 1


def _rewritten(source: Sequence[int], written: Sequence[int]) -> Sequence[int]:
    """The tokens of `source`, skipped by a copy that went on after them, that the reply replaced, writing `written` there.

    Two edits a few tokens apart make one long span (js-modern: `count = count + 1;` became `count += 1;`, and the
    next line's `=== undefined` test became a `!`, so the copy went on 18 tokens after it broke at ` =`): counted as a
    whole it is no single edit, but the reply's own copy of the tokens between them shows which were replaced.
    """
    if len(source) <= SPAN_MAX:
        return source
    if len(source) > SPAN_LONGEST:
        return ()
    blocks = difflib.SequenceMatcher(None, source, written, autojunk=False).get_matching_blocks()
    copied = {i for b in blocks for i in range(b.a, b.a + b.size)}
    if 2 * len(copied) < len(source):
        return ()
    return [t for i, t in enumerate(source) if i not in copied]


def _place(history: Sequence[int], at: int) -> tuple[int, ...]:
    """The CONTEXT source tokens before `at`: what says a place is one where the edit inserts."""
    return tuple(history[at - CONTEXT : at])


def _held_past(keys: Iterable[Hashable | None], broke: Counter, held: Counter) -> list[float]:
    """For m = 1 .. len(keys): the chance that a copy holds past the first m keys, each weighed by the times the reply
    broke a copy there (`broke`) against the times it copied on past it (`held`); a None key never breaks it."""
    out, chance = [], 1.0
    for key in keys:
        if key is not None:
            chance *= _holds_past(broke.get(key, 0), held.get(key, 0))
        out.append(chance)
    return out


def _holds_past(broken: int, held: int) -> float:
    """The chance that a copy holds past a key at which the reply broke copies `broken` times and held `held` times."""
    return 1.0 - broken / (broken + held + PRIOR_COPIES) if broken else 1.0


def _copy_began(history: Sequence[int], start: int, match: int, floor: int) -> int:
    """Where the run that the reply copied up to `start` begins, not before `floor`: the suffix match may run further
    back than the length the index reports (lookup.LENGTHS: a 9-token run is found as 8, and the token before it is
    not replaced)."""
    end, length = len(history), match
    while start - length > floor and history[start - length - 1] == history[end - length - 1]:
        length += 1
    return start - length
