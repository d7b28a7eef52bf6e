# Sourced by bench/run and bench/run-text: installs the PyTorch baseline's Debian packages
# (python3-torch, OpenBLAS) when missing.
extra=()
[ -e /usr/lib/python3/dist-packages/torch/__init__.py ] || extra+=(python3-torch)
[ -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ] || extra+=(libopenblas0-pthread)
if [ ${#extra[@]} -gt 0 ]; then
  echo "bench: installing ${extra[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${extra[@]}" >/dev/null
fi
