"""The one build step pyproject.toml cannot declare: the window's translations compiled before packaging.

app/resources/i18n/*.ts are the sources (in git); the .qm files Qt loads are built from them
(not in git). Compiling them here, in build_py, means every way of installing Lokal carries them:
`pip install .` (the wheel), `pip install -e .` (editable: build_py runs with editable_mode and
the .qm land beside their .ts, where the editable install reads app/ from), scripts/dev.sh and
scripts/release.sh (whose PyInstaller freeze collects app/resources from the same tree).
They are written beside the .ts in every mode, so the source tree and the wheel always agree.
"""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def load_translations():
    """scripts/translations.py, which also refreshes the .ts files by hand (it is not a package)."""
    spec = importlib.util.spec_from_file_location("lokal_translations", ROOT / "scripts" / "translations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class build_py_with_translations(build_py):
    def run(self):
        for qm in load_translations().compile_all():
            self.announce(f"compiled {qm.relative_to(ROOT)}", level=2)
        # build_py lists package data lazily; drop a listing made before the .qm files existed.
        self.__dict__.pop("data_files", None)
        super().run()


setup(cmdclass={"build_py": build_py_with_translations})
