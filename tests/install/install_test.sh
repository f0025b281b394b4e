#!/usr/bin/env bash
# `cmake --install` of a build, into a temporary DESTDIR:
#   - with nbdkit's prefix (the default prefix), the plugin lands in nbdkit's
#     plugindir, where `nbdkit vld` finds it by its short name, and the man
#     page in share/man/man1;
#   - with another --prefix both move under it;
#   - the installed plugin loads; the installed man page renders with man(1),
#     has nbdkit's sections, documents every parameter `--help` lists and
#     every debug flag the plugin exports;
#   - vld-inspect, vld-plot and vld-compare land in bin, their packages in
#     share/vld/python; the installed vld-plot runs from wherever the tree is
#     (DESTDIR included) and draws a layout; the installed vld-inspect runs
#     the vld-plot beside it for --layout, vld-compare's jobs the vld-bench
#     beside it.
#   - every installed tool (VLD_TOOLS) has a man page made from its --help
#     that renders and names every option of its --help.
# VLD_BUILD_DIR: the build directory (set by ctest).
# VLD_TOOLS: the installed programs, "vld-inspect vld-bench ..." (set by ctest).
set -euo pipefail
BUILD=${VLD_BUILD_DIR:?VLD_BUILD_DIR must name the build directory}
VLD_TOOLS=${VLD_TOOLS:?VLD_TOOLS must name the installed programs}
ME=install_test
fail() { echo "$ME: FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vld-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

prefix=$(pkg-config --variable=prefix nbdkit)
plugindir=$(pkg-config --variable=plugindir nbdkit)
[ -n "$prefix" ] && [ -n "$plugindir" ] || fail "pkg-config knows no nbdkit prefix/plugindir"

# 1. nbdkit's prefix: the plugin goes exactly to nbdkit's plugindir.
DESTDIR=$tmp/a cmake --install "$BUILD" --prefix "$prefix" >"$tmp/install-a.log" 2>&1 ||
  { cat "$tmp/install-a.log" >&2; fail "cmake --install --prefix $prefix failed"; }
so=$tmp/a$plugindir/nbdkit-vld-plugin.so
man1=$tmp/a$prefix/share/man/man1/nbdkit-vld-plugin.1
[ -f "$so" ] || fail "no $so; installed: $(cd "$tmp/a" && find . -type f | head -20)"
[ -f "$man1" ] || fail "no $man1; installed: $(cd "$tmp/a" && find . -type f | head -20)"
echo "$ME: prefix $prefix -> ${so#"$tmp/a"}, ${man1#"$tmp/a"}"

# 2. The configured default prefix, if it was left at its default, is nbdkit's.
configured=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD/CMakeCache.txt")
if [ "$configured" = "$prefix" ]; then
  DESTDIR=$tmp/b cmake --install "$BUILD" >"$tmp/install-b.log" 2>&1 ||
    { cat "$tmp/install-b.log" >&2; fail "cmake --install (default prefix) failed"; }
  [ -f "$tmp/b$plugindir/nbdkit-vld-plugin.so" ] ||
    fail "the default prefix did not put the plugin in $plugindir"
else
  echo "$ME: build configured with CMAKE_INSTALL_PREFIX=$configured: default-prefix check skipped"
fi

# 3. Another prefix moves the plugin and the man page under it.
DESTDIR=$tmp/c cmake --install "$BUILD" --prefix /opt/vld >"$tmp/install-c.log" 2>&1 ||
  { cat "$tmp/install-c.log" >&2; fail "cmake --install --prefix /opt/vld failed"; }
rel=${plugindir#"$prefix"/}
[ -f "$tmp/c/opt/vld/$rel/nbdkit-vld-plugin.so" ] || fail "--prefix /opt/vld: no /opt/vld/$rel/nbdkit-vld-plugin.so"
[ -f "$tmp/c/opt/vld/share/man/man1/nbdkit-vld-plugin.1" ] || fail "--prefix /opt/vld: no man page"

# 4. The installed plugin loads.
nbdkit "$so" --dump-plugin >"$tmp/dump" 2>&1 || { cat "$tmp/dump" >&2; fail "nbdkit cannot load $so"; }
grep -q '^vld_version=' "$tmp/dump" || fail "--dump-plugin has no vld_version"

# 5. The man page renders, with nbdkit's sections.
MANWIDTH=100 man -l "$man1" >"$tmp/man.txt" 2>"$tmp/man.err" || { cat "$tmp/man.err" >&2; fail "man -l failed"; }
groff -man -Tutf8 -ww -z "$man1" 2>"$tmp/groff.err" || fail "groff failed: $(cat "$tmp/groff.err")"
[ ! -s "$tmp/groff.err" ] || fail "groff warns: $(head -5 "$tmp/groff.err")"
for section in NAME SYNOPSIS DESCRIPTION PARAMETERS STATISTICS "CRASH GUARANTEES" \
               "DEBUG FLAGS" EXAMPLES FILES "SEE ALSO"; do
  grep -qx "$section" "$tmp/man.txt" || fail "the man page has no $section section"
done
grep -q '^ *nbdkit-vld-plugin - ' "$tmp/man.txt" || fail "NAME does not name nbdkit-vld-plugin"

# 6. Every key of --help is an item of PARAMETERS, and nothing else is.
sed -n '/^PARAMETERS$/,/^STATISTICS$/p' "$tmp/man.txt" >"$tmp/parameters.txt"
nbdkit "$so" --help 2>/dev/null | sed -n '/^plugin: vld/,$p' |
  sed -n 's/^\([a-z_]*\)=.*/\1/p' | sort >"$tmp/help-keys"
[ "$(wc -l <"$tmp/help-keys")" -ge 20 ] || fail "--help lists only $(wc -l <"$tmp/help-keys") keys"
sed -n 's/^       \[\{0,1\}\([a-z_]*\)=\]\{0,1\}.*/\1/p' "$tmp/parameters.txt" | sort >"$tmp/man-keys"
diff -u "$tmp/help-keys" "$tmp/man-keys" >"$tmp/keys.diff" ||
  fail "--help and the man page's PARAMETERS disagree (- help, + man): $(cat "$tmp/keys.diff")"

# 7. Every debug flag the plugin exports is documented, and only those.
nm -D --defined-only "$so" | sed -n 's/.* vld_debug_\([a-z_]*\)$/\1/p' | sort >"$tmp/flags"
[ -s "$tmp/flags" ] || fail "the plugin exports no vld_debug_* flags"
sed -n '/^DEBUG FLAGS$/,/^EXAMPLES$/p' "$tmp/man.txt" |
  sed -n 's/^       -D vld\.\([a-z_]*\)=.*/\1/p' | sort -u >"$tmp/man-flags"
diff -u "$tmp/flags" "$tmp/man-flags" >"$tmp/flags.diff" ||
  fail "exported debug flags and DEBUG FLAGS disagree (- plugin, + man): $(cat "$tmp/flags.diff")"

# 8. vld-inspect and vld-plot, moved together by the prefix.
for d in "$tmp/a$prefix" "$tmp/c/opt/vld"; do
  for f in bin/vld-inspect bin/vld-plot share/vld/python/vldplot/layout.py; do
    [ -f "$d/$f" ] || fail "no $d/$f"
  done
  "$d/bin/vld-plot" --version | grep -q '^vld-plot [0-9]' || fail "$d/bin/vld-plot --version"
  # vld-compare: its package beside vldplot's, and the vld-bench beside it
  # is the one its jobs run.
  [ -f "$d/share/vld/python/vldcompare/cli.py" ] || fail "no $d/share/vld/python/vldcompare/cli.py"
  : >"$tmp/t.log"
  "$d/bin/vld-compare" --print-jobs --modes vld --out "$tmp/cmp" "$tmp/t.log" >"$tmp/jobs.txt" ||
    fail "the installed vld-compare --print-jobs: $(cat "$tmp/jobs.txt")"
  grep -q "&& $d/bin/vld-bench replay $tmp/t.log --mode vld " "$tmp/jobs.txt" ||
    fail "the installed vld-compare does not run the vld-bench beside it: $(cat "$tmp/jobs.txt")"
done
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BUILD/CMakeCache.txt")
"$tmp/c/opt/vld/bin/vld-plot" layout "$src/bench/tests/data/layout/inspect-vld.json" -o "$tmp/layout.png" ||
  fail "the installed vld-plot cannot draw a layout"
[ "$(head -c 4 "$tmp/layout.png" | tail -c 3)" = PNG ] || fail "vld-plot wrote no PNG"
img=$tmp/disk.img
nbdkit -U "$tmp/sock" -P "$tmp/pid" "$so" file="$img" size=16M latency=none >"$tmp/nbdkit.log" 2>&1 ||
  fail "nbdkit cannot serve a new image: $(cat "$tmp/nbdkit.log")"
for _ in $(seq 50); do [ -s "$tmp/pid" ] && break; sleep 0.1; done
kill "$(cat "$tmp/pid")"
for _ in $(seq 50); do kill -0 "$(cat "$tmp/pid")" 2>/dev/null || break; sleep 0.1; done
PATH=/usr/bin:/bin "$tmp/c/opt/vld/bin/vld-inspect" --layout "$tmp/disk.png" "$img" >"$tmp/inspect.out" 2>&1 ||
  fail "the installed vld-inspect --layout: $(cat "$tmp/inspect.out")"
[ "$(head -c 4 "$tmp/disk.png" | tail -c 3)" = PNG ] || fail "vld-inspect --layout wrote no PNG"

# 9. The command-line tools are installed in bin, run from there, and each has
#    a man page that renders and names every option its --help lists.
tools_checked=0
for tool in $VLD_TOOLS; do
  exe=$tmp/a$prefix/bin/$tool
  page=$tmp/a$prefix/share/man/man1/$tool.1
  [ -x "$exe" ] || fail "no $exe"
  [ -f "$page" ] || fail "no man page $page"
  "$exe" --version | grep -q "^$tool " || fail "$tool --version does not name it"
  MANWIDTH=200 man -l "$page" >"$tmp/$tool.txt" 2>"$tmp/$tool.err" ||
    fail "man -l $tool.1 failed: $(cat "$tmp/$tool.err")"
  groff -man -Tutf8 -ww -z "$page" 2>"$tmp/groff.err" || fail "groff failed on $tool.1"
  [ ! -s "$tmp/groff.err" ] || fail "groff warns on $tool.1: $(head -3 "$tmp/groff.err")"
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS "SEE ALSO"; do
    grep -qx "$section" "$tmp/$tool.txt" || fail "$tool.1 has no $section section"
  done
  "$exe" --help | grep -o -- '--[a-z][a-z-]*' | sort -u >"$tmp/$tool-options"
  [ -s "$tmp/$tool-options" ] || fail "$tool --help lists no options"
  while read -r option; do
    grep -q -- "$option" "$tmp/$tool.txt" || fail "$tool.1 does not mention $option"
  done <"$tmp/$tool-options"
  tools_checked=$((tools_checked + 1))
done

echo "$ME: ok: $(wc -l <"$tmp/help-keys") parameters, $(wc -l <"$tmp/flags") debug flags documented;" \
  "$tools_checked tools installed with man pages; vld-inspect --layout draws through vld-plot"
