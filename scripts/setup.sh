#!/usr/bin/env bash
# Installs what building HiGHS from source needs (cmake, libclang) when it is missing.
# Safe to run repeatedly; does nothing when both are present.
set -euo pipefail
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
# bindgen needs libclang itself (libclang.so / libclang-NN.so), not libclang-cpp, which
# a fresh Debian image already has.
if ! ldconfig -p 2>/dev/null | grep -Eq 'libclang(-[0-9.]+)?\.so'; then
  ls /usr/lib/llvm-*/lib/libclang.so* /usr/lib/llvm-*/lib/libclang-[0-9]*.so* >/dev/null 2>&1 || need+=(libclang-dev)
fi
command -v c++ >/dev/null 2>&1 || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (needed to build HiGHS)" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found; install Rust from https://rustup.rs" >&2; exit 1; }
