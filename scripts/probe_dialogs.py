import sys, os
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
import screenshots as s
OUT = Path("/tmp/probe"); OUT.mkdir(exist_ok=True)
app, w = s.open_window("light")
s.settle(app, w)
def shot(name, dlg):
    s.wait(app, dlg.isVisible, 5); 
    for _ in range(5): app.processEvents()
    s.with_popup(w, dlg).save(str(OUT / f"{name}.png")); dlg.close()
shot("settings", w._on_settings())
shot("load", w.local_sections.open_load_settings())
shot("kvcache", w.features["kvcache"].open_dialog())
shot("api", w.features["api"].open_dialog())
d = w.features["attachments"].open_documents()
if d is not None: shot("documents", d)
shot("search", w.features["search"].search_all())
shot("presets", w.features["presets"].pick())
shot("savepreset", w.features["presets"].save_current())
b = w.catalog.open_browser(); s.wait(app, lambda: False, 3); shot("catalog", b)
dock = w.catalog.show_downloads(); s.wait(app, lambda: False, 1); w.grab().save(str(OUT / "downloads.png"))
w.resize(812, 700); s.wait(app, lambda: False, 1); w.grab().save(str(OUT / "narrow.png"))
s.close_window(w)
