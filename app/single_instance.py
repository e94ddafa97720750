"""One window per data directory: a second `lokal` raises the first one's window and exits.

Two windows over one data directory would share one conversations database, one
KV store and one set of download records: the second one's start-up recovery
marks the first one's streaming reply "interrupted", and two runtimes write the
same files. So the window takes a lock file in the data directory before it
opens anything (QLockFile: a lock left by a crashed instance is found stale by
its dead PID and taken over), and listens on a local socket named after that
directory. A second launch that cannot take the lock connects to the socket,
asks the first instance to raise its window, and exits 0 without opening the
database. Headless commands (`lokal chat`, `serve`, `pull`) never take the lock.

On Unix the socket is a file, and Qt puts a bare name in /tmp, where another
account could take a predictable name first (and answer, or refuse, a second
launch). So the socket is a full path in the user's private runtime dir
(runtime.paths.runtime_dir: XDG_RUNTIME_DIR on Linux, 0700). On Windows the
name is a named pipe's, in no folder, and UserAccessOption limits it to the user.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import sys
from pathlib import Path

from PySide6.QtCore import QLockFile, QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from runtime.paths import runtime_dir
from runtime.private_files import tighten_file

log = logging.getLogger("lokal.single_instance")

LOCK_NAME = "lokal-window.lock"
RAISE_REQUEST = b"raise\n"
RAISED_REPLY = b"raised\n"
CONNECT_TIMEOUT_MS = 2_000
REPLY_TIMEOUT_MS = 5_000
LOCK_TIMEOUT_MS = 200
# The first instance may be between taking the lock and listening: try the socket a few times.
CONNECT_ATTEMPTS = 10


def server_name(data_dir: Path) -> str:
    """A socket per user and data directory: a path in the private runtime dir (Unix), a pipe name (Windows).

    Short enough for every platform's limit on socket paths (104 bytes on macOS) where the runtime dir is.
    """
    key = f"{getpass.getuser()}\0{Path(data_dir).resolve()}".encode()
    name = f"lokal-{hashlib.sha256(key).hexdigest()[:16]}"
    if sys.platform == "win32":
        return name
    return str(runtime_dir() / f"{name}.sock")


class SingleInstance(QObject):
    """The first instance's guard: holds the lock and answers a second launch's request to raise the window."""

    sig_raise_requested = Signal()

    def __init__(self, data_dir: Path, parent: QObject | None = None):
        super().__init__(parent)
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.lock = QLockFile(str(self.data_dir / LOCK_NAME))
        # 0: never stale by age (the window holds it for hours); a dead owner's lock is still found stale.
        self.lock.setStaleLockTime(0)
        self.name = server_name(self.data_dir)
        self._server: QLocalServer | None = None

    def acquire(self) -> bool:
        """True if this is the first instance (the lock is now ours and the socket listens)."""
        if not self.lock.tryLock(LOCK_TIMEOUT_MS):
            if self.lock.error() == QLockFile.LockError.LockFailedError:
                return False
            raise OSError(f"cannot create the lock file in {self.data_dir} ({self.lock.error().name})")
        tighten_file(self.data_dir / LOCK_NAME)  # Qt creates it with the umask's mode; it names this machine and PID
        # A crashed instance leaves its socket file behind on Unix: ours replaces it.
        QLocalServer.removeServer(self.name)
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_new_connection)
        if not self._server.listen(self.name):
            log.warning("cannot listen on %s: %s; a second launch will not find this window", self.name, self._server.errorString())
        return True

    def release(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        self.lock.unlock()

    def _on_new_connection(self) -> None:
        while self._server is not None and self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._on_request(s))
            socket.disconnected.connect(socket.deleteLater)

    def _on_request(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return
        if socket.readLine().data() == RAISE_REQUEST:
            log.info("a second launch asked this window to come to the front")
            self.sig_raise_requested.emit()
            socket.write(RAISED_REPLY)
            socket.flush()
        socket.disconnectFromServer()


def ask_first_instance_to_raise(data_dir: Path) -> bool:
    """From a second launch: ask the running instance to raise its window; True once it confirmed."""
    from PySide6.QtCore import QEventLoop, QTimer

    name = server_name(Path(data_dir))
    for attempt in range(CONNECT_ATTEMPTS):
        if attempt:
            # The first instance may hold the lock but not listen yet: wait a moment on an event loop.
            pause = QEventLoop()
            QTimer.singleShot(CONNECT_TIMEOUT_MS // CONNECT_ATTEMPTS, pause.quit)
            pause.exec()
        socket = QLocalSocket()
        socket.connectToServer(name)
        if not socket.waitForConnected(CONNECT_TIMEOUT_MS // CONNECT_ATTEMPTS):
            socket.abort()
            continue
        socket.write(RAISE_REQUEST)
        socket.flush()
        confirmed = False
        while not confirmed and socket.waitForReadyRead(REPLY_TIMEOUT_MS):
            confirmed = socket.canReadLine() and socket.readLine().data() == RAISED_REPLY
        socket.disconnectFromServer()
        return confirmed
    return False
