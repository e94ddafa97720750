"""KvStore: the runtime's saved KV states (`kv.store_info`, `kv.clear`) as Qt signals, for the dialog.

No widgets here: the dialog calls refresh() and clear() and renders what the signals carry.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from runtime.protocol import KvClearResult, KvStoreInfo, KvStoreInfoParams, RpcError, methods

INFO_TIMEOUT_MS = 30_000
CLEAR_TIMEOUT_MS = 120_000


class KvStore(QObject):
    sig_info = Signal(object)  # KvStoreInfo
    sig_cleared = Signal(object)  # KvClearResult
    sig_failed = Signal(str)

    def __init__(self, link, parent: QObject | None = None):
        super().__init__(parent)
        self.link = link
        self.info: KvStoreInfo | None = None

    def refresh(self) -> None:
        self.link.call(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=False), self._on_info, self._on_error, timeout_ms=INFO_TIMEOUT_MS)

    def clear(self) -> None:
        self.link.call(methods.KV_CLEAR, None, self._on_cleared, self._on_error, timeout_ms=CLEAR_TIMEOUT_MS)

    def _on_info(self, info: KvStoreInfo) -> None:
        self.info = info
        self.sig_info.emit(info)

    def _on_cleared(self, result: KvClearResult) -> None:
        self.sig_cleared.emit(result)
        self.refresh()

    def _on_error(self, error: RpcError) -> None:
        self.sig_failed.emit(error.message)
