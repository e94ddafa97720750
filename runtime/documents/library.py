"""Attached documents, from stored bytes to what a user turn says: whole when it fits, its best chunks when not.

The runtime's one place for documents (the window's attachment.add, a chat.generate whose messages
carry attachments, and the API's `file` content parts all come here):

- text is extracted once per file and kept beside its bytes (`<sha256>.text.json`);
- a turn's documents go into that turn's text whole when together they take at most half the chat
  model's context (the rest is for the conversation and the answer). Rendered by the model's own
  template as part of the user turn, they are cached like any turn: a second question about the same
  file evaluates only the question (the KV cache keeps the document);
- larger ones are searched: chunked (chunking.py), embedded by the embedding model loaded beside the
  chat model (runtime/embeddings), the vectors kept in SQLite (index.py), and the chunks most similar
  to the turn's own text put in the turn instead, as many as fit the same half; the reply's citations
  say which, with their lines or page. With no embedding model loaded the chunks are searched by their
  words alone (BM25), which finds names, numbers and the question's own words as well as the hybrid
  search does (test_retrieval_recall.py), though not a paraphrase; a turn that shares no word with
  its documents gets their beginning.

A turn's expansion depends only on the turn (its text and files), the context size and the embedding
model, never on later turns, so a conversation's earlier turns render to the same tokens on every
request and their KV cells are reused; expansions are remembered so later requests do not search again.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from runtime.documents.chunking import chunk_text
from runtime.documents.extract import Extracted, ExtractionError, extract
from runtime.documents.index import WORDS_ONLY, ChunkIndex, Hit
from runtime.documents.store import AttachmentStore, write_atomic
from runtime.embeddings.model import EmbeddingModel
from runtime.protocol import Attachment, AttachmentInfo, ChatGenerateParams, ChatMessage, Citation, ErrorCode, RpcError

Progress = Callable[[int, int], None]  # (done, total)
EXPANSIONS_KEPT = 256
# Extracted texts kept in memory, the last used first; an older one is read again from its .text.json. Kept all, a
# runtime that had been handed a shelf of books held every one of them for as long as it ran.
TEXTS_KEPT_CHARS = 8_000_000
MAX_RETRIEVED = 8  # chunks in one turn, at most, whatever room the context has


@dataclass
class ChatModelView:
    """What documents need of the loaded chat model: its token count for a text, and its context (per sequence)."""

    count_tokens: Callable[[str], int]
    n_ctx: int

    @property
    def document_budget(self) -> int:
        """Tokens a turn's documents may take, whole or as chunks: half the context."""
        return self.n_ctx // 2


class _Indexing:
    """A document's lock while its chunks are embedded: forgotten once no request holds it (a weak reference)."""

    __slots__ = ("lock", "__weakref__")

    def __init__(self) -> None:
        self.lock = threading.Lock()


class DocumentLibrary:
    def __init__(self, root: Path, chat_model: Callable[[], Optional[ChatModelView]]):
        self.store = AttachmentStore(root)
        self._index: ChunkIndex | None = None
        self._index_path = root / "chunks.sqlite3"
        self._chat_model = chat_model
        self.embedder: EmbeddingModel | None = None
        self._lock = threading.Lock()
        self._indexing_locks: weakref.WeakValueDictionary[str, _Indexing] = weakref.WeakValueDictionary()
        self._texts: OrderedDict[str, Extracted] = OrderedDict()
        self._expansions: OrderedDict[tuple, tuple[str, list[Citation]]] = OrderedDict()

    @property
    def index(self) -> ChunkIndex:
        with self._lock:
            if self._index is None:
                self._index = ChunkIndex(self._index_path)
            return self._index

    # ---- files -------------------------------------------------------------
    def add(self, data: bytes, name: str, mime: str, kind: str, progress: Progress | None = None) -> AttachmentInfo:
        """Store a file and say what it is to the loaded model; a document's text is extracted (once) here, and a
        large one's chunks embedded (`progress`: chunks embedded, of how many)."""
        stored = self.store.put(data, name, mime, kind)
        if kind != "document":
            return AttachmentInfo(stored.id, "image", name, mime, stored.bytes)
        return self.info(stored.id, name, mime, progress)

    def info(self, doc: str, name: str, mime: str, progress: Progress | None = None) -> AttachmentInfo:
        extracted = self.text(doc, name, mime)
        info = AttachmentInfo(doc, "document", name, mime, self.store.record(doc).bytes, pages=extracted.pages)
        chat = self._chat_model()
        if chat is None:
            info.note = "no model is loaded: its size in tokens is known once one is"
            return info
        info.tokens = chat.count_tokens(extracted.text)
        info.document_budget = chat.document_budget
        info.fits_whole = info.tokens <= chat.document_budget
        if info.fits_whole:
            return info
        info.words_only = self.ensure_indexed(doc, name, mime, progress) == WORDS_ONLY
        info.searchable = True
        if info.words_only:
            info.note = (
                f"larger than half the context ({chat.document_budget} tokens): the parts that share the most words with each question are used "
                "(an embedding model would also find those that say it in other words)"
            )
        else:
            info.note = f"larger than half the context ({chat.document_budget} tokens): the parts most related to each question are used"
        return info

    def text(self, doc: str, name: str = "", mime: str = "") -> Extracted:
        """The document's text, extracted the first time it is asked for and kept beside its bytes."""
        with self._lock:
            cached = self._texts.get(doc)
            if cached is not None:
                self._texts.move_to_end(doc)
                return cached
        path = self.store.path(doc).with_name(doc + ".text.json")
        if path.exists():
            saved = json.loads(path.read_text(encoding="utf-8"))
            extracted = Extracted(saved["text"], saved["page_starts"])
        else:
            try:
                data = self.store.get(doc)
            except KeyError:
                raise RpcError(ErrorCode.INVALID_PARAMS, f"attachment {doc} ({name or 'no name'}) is not stored here: add it with attachment.add first") from None
            try:
                extracted = extract(data, name, mime)
            except ExtractionError as exc:
                raise RpcError(ErrorCode.INVALID_PARAMS, f"{name or doc}: {exc}") from None
            write_atomic(path, json.dumps({"text": extracted.text, "page_starts": extracted.page_starts}).encode("utf-8"))
        with self._lock:
            self._texts[doc] = extracted
            kept = sum(len(t.text) for t in self._texts.values())
            while kept > TEXTS_KEPT_CHARS and len(self._texts) > 1:
                kept -= len(self._texts.popitem(last=False)[1].text)
        return extracted

    # ---- search --------------------------------------------------------------
    def ensure_indexed(self, doc: str, name: str = "", mime: str = "", progress: Progress | None = None) -> str:
        """Keep the document's chunks for search unless they are kept already: embedded by the embedding model, or
        without one for their words alone; the index's key for them (the model's identity, or WORDS_ONLY)."""
        embedder = self.embedder
        identity = embedder.identity if embedder is not None else WORDS_ONLY
        indexing = self._indexing(doc)
        with indexing.lock:  # the same file attached twice at once is embedded once: the second waits for the first
            if not self.index.has(doc, identity):
                extracted = self.text(doc, name, mime)
                chunks = chunk_text(extracted.text)
                if embedder is not None:
                    vectors = embedder.embed([c.text for c in chunks], truncate=True, progress=progress).vectors
                else:
                    vectors = np.zeros((len(chunks), 0), dtype=np.float32)
                self.index.add(doc, identity, chunks, [(extracted.page_of_line(c.first_line), extracted.page_of_line(c.last_line)) for c in chunks], vectors)
        return identity

    def _indexing(self, doc: str) -> _Indexing:
        with self._lock:
            indexing = self._indexing_locks.get(doc)
            if indexing is None:
                indexing = self._indexing_locks[doc] = _Indexing()
            return indexing

    def search(self, docs: list[str], query: str, k: int) -> list[Hit]:
        embedder = self.embedder
        if embedder is None:
            # Words alone: a query that shares none with the documents gets their beginning rather than nothing.
            return self.index.search(docs, WORDS_ONLY, None, k, words=query) or self.index.opening(docs, WORDS_ONLY, k)
        vector = embedder.embed([query], truncate=True).vectors[0]
        return self.index.search(docs, embedder.identity, vector, k, words=query)

    # ---- prompts -------------------------------------------------------------
    def expand(self, params: ChatGenerateParams) -> tuple[ChatGenerateParams, list[Citation]]:
        """`params` with each message's documents written into its text; the citations of the newest turn's chunks."""
        if not any(a.kind == "document" for m in params.messages for a in m.attachments):
            return params, []
        chat = self._chat_model()
        if chat is None:
            raise RpcError(ErrorCode.NO_MODEL_LOADED, "no model is loaded: call model.load first")
        messages: list[ChatMessage] = []
        citations: list[Citation] = []
        for message in params.messages:
            documents = [a for a in message.attachments if a.kind == "document"]
            if not documents:
                messages.append(message)
                continue
            content, citations = self._expanded_turn(message.content, documents, chat)
            others = [a for a in message.attachments if a.kind != "document"]  # pictures: runtime/vision's
            messages.append(dataclasses.replace(message, content=content, attachments=others))
        last_user_has_docs = any(a.kind == "document" for m in params.messages[-1:] for a in m.attachments)
        return dataclasses.replace(params, messages=messages), citations if last_user_has_docs else []

    def _expanded_turn(self, question: str, documents: list[Attachment], chat: ChatModelView) -> tuple[str, list[Citation]]:
        embedder = self.embedder
        key = (tuple(d.id for d in documents), tuple(d.name for d in documents), question, chat.n_ctx, embedder.identity if embedder else "")
        with self._lock:
            known = self._expansions.get(key)
            if known is not None:
                self._expansions.move_to_end(key)
                return known
        texts = [self.text(d.id, d.name, d.mime) for d in documents]
        sizes = [chat.count_tokens(t.text) for t in texts]
        if sum(sizes) <= chat.document_budget:
            parts = [whole_document(d, t.text) for d, t in zip(documents, texts)]
            expanded: tuple[str, list[Citation]] = (join_turn(parts, question), [])
        else:
            for d in documents:
                self.ensure_indexed(d.id, d.name, d.mime)
            query = question.strip() or " ".join(d.name for d in documents)
            hits = self.search([d.id for d in documents], query, MAX_RETRIEVED * 4)
            chosen: list[Hit] = []
            used = 0
            for hit in hits:
                cost = chat.count_tokens(hit.text) + 24  # the excerpt's own markup
                if chosen and (used + cost > chat.document_budget or len(chosen) == MAX_RETRIEVED):
                    break
                chosen.append(hit)
                used += cost
            expanded = retrieved_turn(question, chosen, {d.id: d.name for d in documents})
        with self._lock:
            self._expansions[key] = expanded
            while len(self._expansions) > EXPANSIONS_KEPT:
                self._expansions.popitem(last=False)
        return expanded


def whole_document(attachment: Attachment, text: str) -> str:
    return f'<document name="{attachment.name}">\n{text}\n</document>'


def retrieved_turn(question: str, chosen: list[Hit], names: dict[str, str]) -> tuple[str, list[Citation]]:
    """The turn's text with each chosen chunk in it, and the reply's citations: each place cited once (merged)."""
    cites = [Citation(h.doc, names.get(h.doc, ""), h.chunk, where(h), h.text, h.page, h.last_page, h.first_line, h.last_line) for h in chosen]
    return join_turn([excerpts(cites)], question), merged(cites)


def excerpts(citations: list[Citation]) -> str:
    parts = [f'<excerpt document="{c.name}" where="{c.where}">\n{c.text}\n</excerpt>' for c in citations]
    return "The parts of the attached documents most related to the question:\n" + "\n".join(parts)


def merged(citations: list[Citation]) -> list[Citation]:
    """One citation per place in a document: chunks of the same attachment and the same page (or line range) read
    as one source, so a reply never lists "report.pdf — page 3" twice. The prompt keeps each chunk apart (excerpts
    is given the unmerged list); here the first one's position in the list (the most relevant first) is kept,
    with the texts joined in the document's order."""
    places: dict[tuple[str, str], list[Citation]] = {}
    for citation in citations:
        places.setdefault((citation.attachment_id, citation.where), []).append(citation)
    # dicts keep the order of first insertion: the first citation's place
    return [dataclasses.replace(same[0], text="\n\n".join(c.text for c in sorted(same, key=lambda c: c.chunk))) for same in places.values()]


def join_turn(parts: list[str], question: str) -> str:
    return "\n\n".join(parts + ([question] if question else []))


def where(hit: Hit) -> str:
    if hit.page:
        return f"page {hit.page}" if hit.last_page == hit.page else f"pages {hit.page}–{hit.last_page}"
    return f"line {hit.first_line}" if hit.first_line == hit.last_line else f"lines {hit.first_line}–{hit.last_line}"
