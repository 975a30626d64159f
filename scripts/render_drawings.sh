#!/usr/bin/env bash
# Renders `ranklab draw` pictures with headless Chromium (Debian's `chromium` package), the
# way a reader sees them in a browser.
#
#   scripts/render_drawings.sh [--docs] RANKLAB OUTDIR
#       draws a broadcast, an allreduce and the circulant graph at p = 7 as SVG and HTML into
#       OUTDIR and renders every SVG to PNG; with --docs also copies the README's two pictures
#       (binomial and circulant broadcast, p = 7) to docs/.
#   scripts/render_drawings.sh --check RANKLAB OUTDIR
#       loads each HTML page and fails on any console message (an error in the page's
#       script) or when the script did not step through every round. Exit 77 (a skipped
#       ctest) when Chromium is not installed.
set -euo pipefail

mode=render
case "${1:-}" in
  --check) mode=check; shift ;;
  --docs) mode=docs; shift ;;
esac
if [ $# -ne 2 ]; then
  echo "usage: $0 [--check|--docs] RANKLAB OUTDIR" >&2
  exit 2
fi
ranklab=$1
out=$2
docs="$(cd "$(dirname "$0")/.." && pwd)/docs"

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "render_drawings: chromium is not installed (apt-get install chromium); skipped" >&2
  exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)  # file:// URLs need an absolute path
# Chromium wants a writable profile; keep it out of the user's home.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browse() {
  timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --hide-scrollbars --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 "$@"
}

# name and `ranklab draw` arguments of every picture
figures=(
  "bcast_binomial_p7|--coll bcast --algo binomial -p 7"
  "bcast_circulant_p7|--coll bcast --algo circulant -p 7 --count 8 --blocks 4"
  "bcast_scatter_allgather_p7|--coll bcast --algo scatter_allgather -p 7"
  "allreduce_recursive_doubling_p8|--coll allreduce --algo recursive_doubling -p 8"
  "circulant_graph_p7|--circulant -p 7"
)

status=0
for entry in "${figures[@]}"; do
  name=${entry%%|*}
  # shellcheck disable=SC2086 # the arguments are words
  set -- ${entry#*|}
  for ext in svg html; do
    "$ranklab" draw "$@" --out "$out/$name.$ext" -q
  done
  if [ "$mode" = check ]; then
    dom="$out/$name.dom" log="$out/$name.log"
    browse --dump-dom "file://$out/$name.html" >"$dom" 2>"$log" || true
    if grep -q ':CONSOLE' "$log"; then
      echo "render_drawings: $name.html logs to the console:" >&2
      grep ':CONSOLE' "$log" >&2
      status=1
    elif ! grep -q 'data-stepped=' "$dom"; then
      echo "render_drawings: $name.html: the page's script did not run through the rounds" >&2
      tail -5 "$log" >&2
      status=1
    else
      echo "render_drawings: $name.html loads, steps through every round, no console messages"
    fi
    continue
  fi
  # The screenshot is the SVG's own size (its width and height attributes).
  size=$(grep -o -m1 '<svg [^>]*' "$out/$name.svg" | sed -E 's/.* width="([0-9.]+)" height="([0-9.]+)".*/\1 \2/')
  read -r width height <<<"$size"
  width=${width%.*} height=${height%.*}
  browse --window-size="$((width + 1)),$((height + 1))" --screenshot="$out/$name.png" "file://$out/$name.svg" \
    2>"$out/$name.log" >/dev/null
  echo "render_drawings: $out/$name.png (${width}x${height})"
done
if [ "$mode" = docs ]; then
  cp "$out/bcast_binomial_p7.png" "$out/bcast_circulant_p7.png" "$docs/"
  echo "render_drawings: copied bcast_binomial_p7.png and bcast_circulant_p7.png to $docs"
fi
exit $status
