"""The saved KV states in the window: how much the store holds, and clearing it (runtime/kvstore does the work).

    store.py     KvStore: kv.store_info and kv.clear as Qt signals
    dialog.py    the dialog that renders them
    feature.py   install(context): Edit ▸ Saved conversation caches… (Ctrl+Shift+K)
"""
