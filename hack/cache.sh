# Sourced by the build scripts: where tool binaries and CRD schemas are cached.
#
# The cache belongs to the machine, not to a clone: every clone (CI clones afresh each run) finds the tools an
# earlier one built. Each entry is keyed by the versions and files it was built from, so a clone never uses a binary
# or schema built from anything else. KISO_CACHE overrides the place; without it the user's cache directory
# ($XDG_CACHE_HOME, else ~/.cache) holds a kiso folder.
#
# hack_cache_dir ROOT: prints the cache directory.
hack_cache_dir() {
  if [ -n "${KISO_CACHE:-}" ]; then
    echo "$KISO_CACHE"
  elif [ -n "${XDG_CACHE_HOME:-}" ]; then
    echo "$XDG_CACHE_HOME/kiso"
  elif [ -n "${HOME:-}" ]; then
    echo "$HOME/.cache/kiso"
  else
    echo "$1/.cache"
  fi
}
