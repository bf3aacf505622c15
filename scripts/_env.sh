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
