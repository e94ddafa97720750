"""The SQL that walks a conversation's message tree; the Store (store.py) runs it inside its own calls.

Each message names its parent (NULL for a first message); a conversation names its selected leaf, and
what the window shows and sends is the path from a first message down to that leaf. Paths are walked
upwards from the leaf with a recursive query bounded by depth, so showing the newest 100 messages of a
200,000-message path reads about 100 rows; a subtree (a branch to select or delete) is walked downwards
along the (conversation_id, parent_id) index (whose rows end with the id: siblings come in order). messages(parent_id) is the foreign key's own
index: without it each deleted message would scan the table for children.

Order among messages is their id's: ids are never used twice (AUTOINCREMENT), a message is always
written after its parent, and an undone delete puts messages back with their ids, so siblings come back
in their places. The newest leaf under a message is simply the newest message in its subtree: the
newest one cannot have children. (`position` only has to stay unique, the column's old constraint.)
"""

from __future__ import annotations

import sqlite3

# A message's place among its siblings (same conversation, same parent), 1-based, and their number.
BRANCH_COLUMNS = """
    (SELECT COUNT(*) FROM messages s WHERE s.conversation_id = m.conversation_id AND s.parent_id IS m.parent_id AND s.id <= m.id) AS branch,
    (SELECT COUNT(*) FROM messages s WHERE s.conversation_id = m.conversation_id AND s.parent_id IS m.parent_id) AS branches
"""

# The path from `leaf` upwards, at most `steps` messages: (id, parent_id, depth).
_PATH = """
WITH RECURSIVE path(id, parent_id, depth) AS (
    SELECT id, parent_id, depth FROM messages WHERE id = :leaf
    UNION ALL
    SELECT m.id, m.parent_id, m.depth FROM messages m JOIN path p ON m.id = p.parent_id
    LIMIT :steps
)
"""

# Every message of the subtree under `root` (itself included), in one conversation.
_SUBTREE = """
WITH RECURSIVE sub(id) AS (
    SELECT :root
    UNION ALL
    SELECT m.id FROM messages m JOIN sub ON m.conversation_id = :conversation AND m.parent_id = sub.id
)
"""


def leaf_of(db: sqlite3.Connection, conversation_id: str) -> tuple[int, int] | None:
    """(id, depth) of the conversation's selected leaf; None if it has no messages."""
    row = db.execute(
        "SELECT m.id, m.depth FROM conversations c JOIN messages m ON m.id = c.selected_leaf WHERE c.id = ?", (conversation_id,)
    ).fetchone()
    return (row[0], row[1]) if row else None


def path_rows(
    db: sqlite3.Connection, conversation_id: str, since: int, before: int | None, newest: int | None, branches: bool = True
) -> list[sqlite3.Row]:
    """The selected path's messages at depth `since` or more and below `before`, top to bottom; only the
    `newest` of them if given. Reads only the part of the path from the leaf up to the first one returned.
    Without `branches` the rows leave out each message's place among its siblings (two counts a row: what
    a reply's prompt does not need, on the GUI thread, for up to thousands of rows)."""
    leaf = leaf_of(db, conversation_id)
    if leaf is None:
        return []
    leaf_id, leaf_depth = leaf
    top = leaf_depth if before is None else min(leaf_depth, before - 1)
    bottom = since if newest is None else max(since, top - newest + 1)
    if top < bottom:
        return []
    steps = leaf_depth - bottom + 1
    return db.execute(
        _PATH + f"SELECT m.*{', ' + BRANCH_COLUMNS if branches else ''} FROM path JOIN messages m ON m.id = path.id "  # nosec B608: the query's text is this module's constants (tree.py's columns and CTEs); every value is bound
        "WHERE path.depth >= :bottom AND path.depth <= :top ORDER BY path.depth",
        {"leaf": leaf_id, "steps": steps, "bottom": bottom, "top": top},
    ).fetchall()


def path_ids(db: sqlite3.Connection, leaf_id: int) -> list[int]:
    """The ids from the first message down to `leaf_id`."""
    rows = db.execute(_PATH + "SELECT id FROM path ORDER BY depth", {"leaf": leaf_id, "steps": -1}).fetchall()  # nosec B608: the query's text is this module's constants (tree.py's columns and CTEs); every value is bound
    return [r[0] for r in rows]


def subtree_ids(db: sqlite3.Connection, conversation_id: str, root_id: int) -> list[int]:
    """`root_id` and every message under it, in the order they were written."""
    rows = db.execute(
        _SUBTREE + "SELECT id FROM sub ORDER BY id",  # nosec B608: the query's text is this module's constants (tree.py's columns and CTEs); every value is bound
        {"root": root_id, "conversation": conversation_id},
    ).fetchall()
    return [r[0] for r in rows]


def newest_leaf_under(db: sqlite3.Connection, conversation_id: str, root_id: int) -> int:
    """The newest message in the subtree under `root_id`: a leaf (see the module docstring)."""
    row = db.execute(
        _SUBTREE + "SELECT MAX(id) FROM sub",  # nosec B608: the query's text is this module's constants (tree.py's columns and CTEs); every value is bound
        {"root": root_id, "conversation": conversation_id},
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else root_id


def sibling_ids(db: sqlite3.Connection, conversation_id: str, parent_id: int | None) -> list[int]:
    """The messages under `parent_id` (None: the first messages), in the order they were written."""
    rows = db.execute(
        "SELECT id FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY id", (conversation_id, parent_id)
    ).fetchall()
    return [r[0] for r in rows]


# A conversation whose rows were written with positions 0..n-1 only (bulk fills in tests and benchmarks, as the
# schema 2 -> 3 migration finds them), made one path: each message's parent is the one before it.
LINK_AS_ONE_PATH = """
UPDATE messages SET depth = position,
    parent_id = (SELECT p.id FROM messages p WHERE p.conversation_id = messages.conversation_id AND p.position = messages.position - 1)
    WHERE conversation_id = :conversation;
UPDATE conversations SET selected_leaf =
    (SELECT m.id FROM messages m WHERE m.conversation_id = conversations.id ORDER BY m.position DESC LIMIT 1)
    WHERE id = :conversation;
"""


def link_as_one_path(db: sqlite3.Connection, conversation_id: str) -> None:
    for statement in LINK_AS_ONE_PATH.split(";"):
        if statement.strip():
            db.execute(statement, {"conversation": conversation_id})
