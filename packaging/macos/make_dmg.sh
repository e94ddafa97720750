#!/usr/bin/env bash
# Pack dist/Lokal.app into a compressed .dmg whose window offers the app and a link to /Applications.
#   bash packaging/macos/make_dmg.sh dist/Lokal.app dist/Lokal-0.1.0-macos-arm64.dmg
# macOS only (hdiutil). Signing and notarization happen in the release workflow, when its secrets exist.
set -euo pipefail
app=${1:?usage: make_dmg.sh PATH/Lokal.app OUT.dmg}
out=${2:?usage: make_dmg.sh PATH/Lokal.app OUT.dmg}
[ -d "$app/Contents/MacOS" ] || { echo "make_dmg: $app is not an .app bundle" >&2; exit 2; }
command -v hdiutil >/dev/null || { echo "make_dmg: hdiutil is macOS-only" >&2; exit 2; }

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
# ditto keeps the bundle's symlinks, extended attributes and signature intact (cp -R may not).
ditto "$app" "$staging/Lokal.app"
ln -s /Applications "$staging/Applications"
rm -f "$out"
hdiutil create -volname Lokal -srcfolder "$staging" -fs HFS+ -format UDZO -imagekey zlib-level=9 -ov "$out"
hdiutil verify "$out"
echo "make_dmg: $out"
