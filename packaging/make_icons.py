"""Render app/resources/icons/lokal.svg into the raster icons installers need (PNG, Windows .ico, macOS .icns).

Run after editing the SVG: `.venv/bin/python packaging/make_icons.py`. The results are kept in the
repository, so building an installer needs no SVG renderer.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "app" / "resources" / "icons"
# name -> (pixel size, Qt image format)
OUTPUTS = {"lokal.png": (256, "PNG"), "lokal.ico": (256, "ICO"), "lokal.icns": (512, "ICNS")}


def render(svg: Path, out_dir: Path) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"make_icons: {svg} is not a valid SVG")
    written = []
    for name, (size, fmt) in OUTPUTS.items():
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        target = out_dir / name
        if not image.save(str(target), fmt):
            raise SystemExit(f"make_icons: Qt could not write {target} as {fmt}")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svg", type=Path, default=ICONS / "lokal.svg")
    parser.add_argument("--out", type=Path, default=ICONS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for path in render(args.svg, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
