#!/usr/bin/env bash
# Google's Noto fonts from Debian's packages, for heatmap labels in any script
# (rnnsearch_plugin/analysis/fonts.py): fonts-noto-core (Latin, Greek, Cyrillic, Arabic, Hebrew and
# most other scripts; 12 MB to download, 43 MB installed) and fonts-noto-cjk (Chinese, Japanese,
# Korean; 57 MB, 91 MB installed). matplotlib finds them without any configuration; without them,
# labels in Chinese, Japanese or Korean are drawn as boxes and the heatmap says so in one line, and
# tests/analysis/test_heatmap.py skips its font tests. Run as root (or through sudo).
set -euo pipefail
if [ -e /usr/share/fonts/truetype/noto/NotoSans-Regular.ttf ] && [ -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ]; then
  echo "| fonts-noto-core and fonts-noto-cjk are installed"
  exit 0
fi
SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends fonts-noto-core fonts-noto-cjk
echo "| installed fonts-noto-core and fonts-noto-cjk"
