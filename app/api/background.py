"""Closing the window while it serves the API: ask, then stop and quit, or keep serving in the background.

The API lives in the window's runtime, so quitting ends it, and cuts off any reply a client is
streaming. Closing therefore asks first (saying how many requests are being answered right now,
from runtime.metrics), with "Keep serving in the background" as the default. In the background the
window is hidden and a tray icon stays, where the platform has a system tray
(QSystemTrayIcon.isSystemTrayAvailable()): clicking it shows the window again; its menu also stops
the API and quits. Without a tray the window is minimized instead, so it stays reachable from the
task bar (and launching Lokal again brings it to the front, app/single_instance.py).
`lokal serve` has no window and is not concerned.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QMenu, QMessageBox, QPushButton, QSystemTrayIcon

from app.api.server import ApiServer
from app.features import FeatureContext
from runtime.protocol import MetricsResult, methods

log = logging.getLogger("lokal.api")

KEEP, STOP, CANCEL = "keep", "stop", "cancel"
ASK_TIMEOUT_MS = 3_000  # how long the question waits for the runtime's count of API requests


class CloseWhileServing(QObject):
    """The close guard of a window whose runtime serves the API, and the background mode it may lead to."""

    sig_asked = Signal(object)  # the question (a QMessageBox), once it is shown
    sig_answered = Signal(str)  # KEEP, STOP or CANCEL

    def __init__(self, context: FeatureContext, server: ApiServer, tray_available: bool | None = None):
        window = context.window()
        super().__init__(window)
        self.context = context
        self.window = window  # the widget it hides, minimizes and shows again
        self.server = server
        self.tray_available = QSystemTrayIcon.isSystemTrayAvailable() if tray_available is None else tray_available
        self.question: QMessageBox | None = None
        self.tray: QSystemTrayIcon | None = None
        self.in_background = False
        self._asking = False
        context.add_close_guard(self.may_close)
        window.installEventFilter(self)

    # ---- closing -------------------------------------------------------------------
    def may_close(self) -> bool:
        """The window's close guard: True closes at once; False while the question is (about to be) asked."""
        if not self.server.running or self.context.is_shut_down:
            return True
        if not self._asking:
            self._asking = True
            # How many requests the API is answering decides what the question says: ask the runtime first.
            self.context.link.call(methods.RUNTIME_METRICS, None, on_result=self._ask, on_error=lambda _error: self._ask(None), timeout_ms=ASK_TIMEOUT_MS)
        return False

    def _ask(self, metrics: MetricsResult | None) -> None:
        busy = metrics.api_requests if metrics is not None else 0
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(self.tr("Keep serving the API?"))
        if busy:
            box.setText(self.tr("The API is answering %n request(s) right now.", "", busy))
            box.setInformativeText(self.tr(
                "Quitting stops the API and cuts those replies off. Lokal can keep serving in the background instead."
            ))
        else:
            box.setText(self.tr("Lokal is serving the API at {url}.").format(url=self.server.url or self.tr("this machine")))
            box.setInformativeText(self.tr(
                "Quitting stops the API, and programs that use it lose it. Lokal can keep serving in the background instead."
            ))
        keep = box.addButton(self.tr("Keep serving in the background"), QMessageBox.ButtonRole.AcceptRole)
        stop = box.addButton(self.tr("Stop the API and quit"), QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(keep)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)
        for button in box.buttons():
            button.setAccessibleDescription(button.text().replace("&", ""))
        box.setAccessibleName(box.windowTitle())
        box.setAccessibleDescription(box.text())
        self.question = box
        box.finished.connect(lambda _result: self._on_answer(box, keep, stop))
        box.open()
        self.sig_asked.emit(box)

    def _on_answer(self, box: QMessageBox, keep: QPushButton, stop: QPushButton) -> None:
        self._asking = False
        self.question = None
        clicked = box.clickedButton()
        box.deleteLater()
        answer = KEEP if clicked is keep else STOP if clicked is stop else CANCEL
        log.info("closing while serving the API: %s", answer)
        if answer != STOP:
            self.context.restart_requested = False  # a restart (View ▸ Language) waits for a close that really closes
        if answer == KEEP:
            self.keep_serving()
        elif answer == STOP:
            self.stop_and_quit()
        self.sig_answered.emit(answer)

    # ---- in the background -------------------------------------------------------
    def keep_serving(self) -> None:
        self.in_background = True
        if self.tray_available:
            self._show_tray()
            self.window.hide()
        else:
            self.window.showMinimized()
            self.context.show_status(self.tr("Serving the API in the background"))

    def show_window(self) -> None:
        self.context.bring_to_front()  # the event filter below then ends the background mode

    def stop_and_quit(self) -> None:
        self.in_background = False
        self.server.stop()
        if self.tray is not None:
            self.tray.hide()
        self.context.quit_now()

    def _show_tray(self) -> None:
        if self.tray is None:
            self.tray = QSystemTrayIcon(self.window.windowIcon(), self)
            menu = QMenu(self.window)
            self.tray_show_action = menu.addAction(self.tr("Show Lokal"), self.show_window)
            self.tray_quit_action = menu.addAction(self.tr("Stop the API and quit"), self.stop_and_quit)
            self.tray.setContextMenu(menu)
            self.tray.activated.connect(self._on_tray_activated)
        self.tray.setToolTip(self.tr("Lokal is serving the API at {url}").format(url=self.server.url))
        self.tray.show()
        self.tray.showMessage(
            self.tr("Lokal keeps serving the API"), self.tr("Click the Lokal icon to open the window again."),
            QSystemTrayIcon.MessageIcon.Information, 5_000,
        )

    def _on_tray_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.show_window()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        back = event.type() == QEvent.Type.Show or (event.type() == QEvent.Type.WindowStateChange and not self.window.isMinimized())
        if watched is self.window and back and self.in_background:
            self.in_background = False  # the window is back (tray, task bar, or a second launch)
            if self.tray is not None:
                self.tray.hide()
            self.context.clear_status()
        return False
