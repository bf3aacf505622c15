# Shared by scripts/run and scripts/test: make .venv and install the project into it when needed.
# Sourced, not executed. Works on a fresh machine with nothing but Python >= 3.11.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

find_python() {
  for candidate in python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  echo "wharf needs Python >= 3.11 on PATH" >&2
  return 1
}

# ensure_venv EXTRAS: install '.[EXTRAS]' unless the same pyproject.toml was installed already.
ensure_venv() {
  local extras="$1" stamp want
  if [ ! -x .venv/bin/python ]; then
    "$(find_python)" -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
  fi
  stamp=.venv/.wharf-installed
  want="$(sha256sum pyproject.toml | cut -d' ' -f1) [$extras]"
  if [ ! -f "$stamp" ] || ! grep -qxF "$want" "$stamp"; then
    if [ -n "$extras" ]; then
      .venv/bin/python -m pip install --quiet -e ".[$extras]"
    else
      .venv/bin/python -m pip install --quiet -e .
    fi
    echo "$want" >> "$stamp"
  fi
  export PATH="$ROOT/.venv/bin:$PATH"
}

# ensure_postgres: the PostgreSQL server binaries the tests start a throw-away server from
# (tests/pgserver.py), installed from the OS packages when neither PATH nor Debian's layout has them.
ensure_postgres() {
  if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    return 0
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "== installing the PostgreSQL server binaries (apt-get install postgresql)"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql
}

# ensure_chromium: the browser tests drive the OS package's headless Chromium (Playwright's own
# browser download is not used). Installed with apt-get when missing and we may; otherwise a warning,
# and the browser tests fail with the same hint.
CHROMIUM="${WHARF_CHROMIUM:-/usr/bin/chromium}"
ensure_chromium() {
  [ -x "$CHROMIUM" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium (OS package) for the browser tests"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "warning: $CHROMIUM is missing; install the 'chromium' package for the browser tests" >&2
  fi
}

# ensure_web_assets: the console's terminal emulator (xterm.js and its fit add-on), pinned to exact
# versions and to the npm registry's integrity hashes, fetched once with `npm pack` into the
# git-ignored console/web/static/vendor/ (shipped in the wheel and the image as package data;
# never loaded from a CDN). The ES module builds are kept as .js, so every Python serves them as
# JavaScript. A tarball whose hash differs is refused and nothing is written.
WEB_VENDOR="$ROOT/console/web/static/vendor"
WEB_PACKAGES=(
  "@xterm/xterm@6.0.0 sha512-TQwDdQGtwwDt+2cgKDLn0IRaSxYu1tSUjgKarSDkUM0ZNiSRXFpjxEsvc/Zgc5kq5omJ+V0a8/kIM2WD3sMOYg== lib/xterm.mjs:xterm.js css/xterm.css:xterm.css LICENSE:xterm.LICENSE"
  "@xterm/addon-fit@0.11.0 sha512-jYcgT6xtVYhnhgxh3QgYDnnNMYTcf8ElbxxFzX0IZo+vabQqSPAjC3c1wJrKB5E19VwQei89QCiZZP86DCPF7g== lib/addon-fit.mjs:addon-fit.js LICENSE:addon-fit.LICENSE"
)
ensure_web_assets() {
  local want stamp="$WEB_VENDOR/.installed"
  want="$(printf '%s\n' "${WEB_PACKAGES[@]}" | sha256sum | cut -d' ' -f1)"
  [ -f "$stamp" ] && grep -qxF "$want" "$stamp" && return 0
  if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "== installing npm (OS package) to fetch the console's terminal emulator"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
    else
      echo "the console's terminal needs npm to fetch xterm.js (apt-get install npm)" >&2
      return 1
    fi
  fi
  local work entry spec integrity tarball got file
  work="$(mktemp -d)"
  mkdir -p "$work/vendor"
  for entry in "${WEB_PACKAGES[@]}"; do
    read -r spec integrity files <<<"$entry"
    tarball="$(cd "$work" && npm pack --silent "$spec")"
    got="$("$(find_python)" -c 'import base64, hashlib, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$work/$tarball")"
    if [ "$got" != "$integrity" ]; then
      echo "$spec: the tarball's hash is $got, not the pinned $integrity; nothing installed" >&2
      rm -rf "$work"; return 1
    fi
    mkdir -p "$work/unpacked"
    tar -xzf "$work/$tarball" -C "$work/unpacked"
    for file in $files; do
      cp "$work/unpacked/package/${file%%:*}" "$work/vendor/${file##*:}"
    done
    rm -rf "$work/unpacked"
  done
  echo "$want" > "$work/vendor/.installed"
  rm -rf "$WEB_VENDOR"
  mv "$work/vendor" "$WEB_VENDOR"
  rm -rf "$work"
  echo "== console web assets: ${WEB_PACKAGES[*]%% *} in console/web/static/vendor"
}
